import Crypto
import Foundation
import Platform
import Wire

/// `switchboard jwt`: signs an application or user token offline with the application's private key.
struct JWTCommand {
    static let command = Command(name: "jwt", summary: "make an application or user JWT (offline)", usage: usage) { args in
        try run(args)
    }

    static let usage = """
    Usage: switchboard jwt [--app-id ID --key-file FILE] [--subject NAME] [--acl JSON | --acl client] [--ttl 6h]

    Signs an RS256 token with the application's private key, without contacting the server, and prints it.
    Without --app-id/--key-file the application in ./switchboard_app.json is used.

    Options:
      --app-id ID       application id
      --key-file FILE   the application's private key (PEM)
      --subject NAME    user name (the `sub` claim): makes a user token for client SDKs
      --acl JSON        the `acl` claim: {"paths": {...}}, a paths object, or a JSON array of paths
      --acl client      the standard client path set (/*/users/**, /*/conversations/**, /*/sessions/**, ...)
      --ttl DURATION    lifetime: 90s, 15m, 6h, 1d (default 15m; the server refuses more than 24h)
      --json            print {"token", "expires_at", "claims"}
    """

    static func run(_ argv: [String]) throws -> Int32 {
        let args = try Arguments(argv)
        try args.check(known: ["--app-id", "--key-file", "--subject", "--acl", "--ttl", "--json"])
        let app = try AppCredentials.resolve(args)
        let ttl = try args["--ttl"].map(parseDuration) ?? 900
        if ttl > Authenticator.maxLifetime {
            Output.warn("warning: the server refuses tokens that live longer than 24h")
        }
        let acl = try args["--acl"].map(parseACL)
        let now = Date()
        let (token, claims) = try app.token(subject: args["--subject"], acl: acl, ttl: ttl, now: now)
        if args.flag("--json") {
            Output.print(Output.json(["token": .string(token), "expires_at": .string(now.addingTimeInterval(ttl).iso8601),
                                      "claims": .object(claims)]))
        } else {
            Output.print(token)
        }
        return 0
    }

    /// `90`, `90s`, `15m`, `6h`, `1d` → seconds.
    static func parseDuration(_ s: String) throws -> TimeInterval {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var text = s.trimmingCharacters(in: .whitespaces).lowercased()
        var factor = 1.0
        if let last = text.last, let f = units[last] {
            factor = f
            text.removeLast()
        }
        guard let n = Double(text), n > 0, n.isFinite else { throw CLIError("--ttl must look like 90s, 15m, 6h or 1d (got \(s))") }
        return n * factor
    }

    /// The `acl` claim from `client`, `{"paths": {...}}`, a bare paths object, or an array of paths.
    static func parseACL(_ s: String) throws -> JSONValue {
        if s == "client" {
            return .object(["paths": .object(Dictionary(uniqueKeysWithValues: ACL.clientPaths.map { ($0, JSONValue.object([:])) }))])
        }
        guard let v = try? JSONDecoder().decode(JSONValue.self, from: Data(s.utf8)) else {
            throw CLIError("--acl must be 'client' or JSON, e.g. '{\"paths\": {\"/*/users/**\": {}}}'")
        }
        switch v {
        case .object(let o) where o["paths"] != nil:
            return v
        case .object:
            return .object(["paths": v])
        case .array(let a):
            let paths = try a.map { item -> String in
                guard let p = item.stringValue else { throw CLIError("--acl array items must be path strings") }
                return p
            }
            return .object(["paths": .object(Dictionary(paths.map { ($0, JSONValue.object([:])) }) { a, _ in a })])
        default:
            throw CLIError("--acl must be a JSON object or array")
        }
    }
}

/// An application's id and private key, from `--app-id`/`--key-file` or `./switchboard_app.json`.
struct AppCredentials {
    static let appFile = "switchboard_app.json"

    let id: String
    let key: RSAPrivateKey

    static func resolve(_ args: Arguments) throws -> AppCredentials {
        var id = args["--app-id"]
        var pem: String?
        if let path = args["--key-file"] {
            guard let data = FileManager.default.contents(atPath: path) else { throw CLIError("cannot read key file \(path)") }
            pem = String(decoding: data, as: UTF8.self)
        }
        if id == nil || pem == nil, let data = FileManager.default.contents(atPath: appFile) {
            guard let obj = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw CLIError("\(appFile) is not a JSON object")
            }
            let fileID = (obj["id"] ?? obj["application_id"]) as? String
            if id == nil { id = fileID }
            if pem == nil, id == fileID { pem = obj["private_key"] as? String }
        }
        guard let id, !id.isEmpty else { throw CLIError("no application: pass --app-id and --key-file, or run where \(appFile) is") }
        guard let pem else { throw CLIError("no private key for application \(id): pass --key-file") }
        do {
            return AppCredentials(id: id, key: try RSAPrivateKey(pem: pem))
        } catch {
            throw CLIError("the private key for application \(id) cannot be used: \(error)")
        }
    }

    /// An RS256 token with the claims the Vonage SDKs put in: `application_id`, `iat`, `jti`, `exp`, and for
    /// users `sub` and `acl`.
    func token(subject: String? = nil, acl: JSONValue? = nil, ttl: TimeInterval = 300, now: Date = Date()) throws -> (String, [String: JSONValue]) {
        let iat = now.timeIntervalSince1970.rounded(.down)
        var claims: [String: JSONValue] = [
            "application_id": .string(id), "iat": .number(iat), "jti": .string(UUID4.generate()),
            "exp": .number(iat + ttl.rounded()),
        ]
        if let subject, !subject.isEmpty { claims["sub"] = .string(subject) }
        if let acl { claims["acl"] = acl }
        do {
            return (try JWT.sign(claims: claims, key: .rs256(key)), claims)
        } catch {
            throw CLIError("cannot sign the token: \(error)")
        }
    }
}
