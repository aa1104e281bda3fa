import Crypto
import Foundation
import Runtime
import Wire

// What the reference app servers (switchboard-dropin, switchboard-voice, switchboard-video) share: their command
// line, the application's credentials, and Switchboard's REST API called with an application JWT, exactly as an
// app server calls the hosted Vonage APIs.

public enum AppServer {
    /// Runs the app server `switchboard-NAME` until the process ends: `make` builds its HTTP application on the
    /// server's loops and says where to listen and what to announce once listening. 1 when it cannot start.
    public static func run(_ name: String,
                           make: (EventLoopGroup) throws -> (listen: SocketAddress, application: HTTPApplication, about: String)) async -> Int32 {
        do {
            let group = EventLoopGroup(threads: 1, name: name)
            let made = try make(group)
            let address = try HTTPServer(group: group, responder: made.application).listen(made.listen)
            FileHandle.standardOutput.write(Data("switchboard-\(name) serving http://\(address)/ \(made.about)\n".utf8))
            while true { try await Task.sleep(for: .seconds(3600)) }
        } catch {
            FileHandle.standardError.write(Data("switchboard-\(name): \(error)\n".utf8))
            return 1
        }
    }
}

/// `--name value` pairs, each name one of `known`; a value not given falls back to an environment variable.
public struct AppServerOptions {
    private var values: [String: String] = [:]
    private let environment = ProcessInfo.processInfo.environment

    public init(_ argv: [String], known: Set<String>) throws {
        var i = 0
        while i < argv.count {
            guard argv[i].hasPrefix("--"), i + 1 < argv.count else { throw ConfigError("unexpected argument \(argv[i])") }
            guard known.contains(argv[i]) else { throw ConfigError("unknown option \(argv[i])") }
            values[argv[i]] = argv[i + 1]
            i += 2
        }
    }

    public subscript(_ name: String, env variable: String? = nil) -> String? {
        values[name] ?? variable.flatMap { environment[$0] }
    }

    /// `--listen HOST:PORT` (or `variable`), else `fallback`.
    public func listen(env variable: String, default fallback: SocketAddress) throws -> SocketAddress {
        guard let text = self["--listen", env: variable] else { return fallback }
        guard let address = SocketAddress(parsing: text) else { throw ConfigError("--listen: expected HOST:PORT") }
        return address
    }

    /// `--switchboard URL` (or `SWITCHBOARD_URL`), without a trailing slash.
    public var switchboard: String {
        (self["--switchboard", env: "SWITCHBOARD_URL"] ?? "http://127.0.0.1:8080").trimmingCharacters(in: ["/"])
    }

    /// The application's id and private key: `--app-id` and `--key-file` (or `SWITCHBOARD_APP_ID`,
    /// `SWITCHBOARD_KEY_FILE`), else the `switchboard_app.json` that `switchboard apps create` writes.
    public func application() throws -> ApplicationCredentials {
        var id = self["--app-id", env: "SWITCHBOARD_APP_ID"]
        var pem = self["--key-file", env: "SWITCHBOARD_KEY_FILE"].flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }
        if id == nil || pem == nil, let data = FileManager.default.contents(atPath: "switchboard_app.json"),
           let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
            id = id ?? object["id"] as? String
            pem = pem ?? object["private_key"] as? String
        }
        guard let id, let pem else { throw ConfigError("--app-id and --key-file are required (or switchboard_app.json in the current directory)") }
        return ApplicationCredentials(id: id, privateKey: try RSAPrivateKey(pem: pem))
    }
}

public struct ConfigError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

public struct ApplicationCredentials: Sendable {
    public let id: String
    public let privateKey: RSAPrivateKey

    /// Signs `claims` with the application's key, adding `application_id`, `iat`, `exp` (`ttl` seconds on) and `jti`.
    public func token(ttl: Int, _ claims: [String: JSONValue] = [:]) throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        var all = claims
        all["application_id"] = .string(id)
        all["iat"] = .number(Double(now))
        all["exp"] = .number(Double(now + ttl))
        all["jti"] = .string(UUID4.generate())
        return try JWT.sign(claims: all, key: .rs256(privateKey))
    }

    /// A client token for the user `name`: the standard client paths in its `acl`, valid 6 hours.
    public func userToken(_ name: String) throws -> String {
        let paths = ["/*/users/**", "/*/conversations/**", "/*/sessions/**", "/*/devices/**", "/*/image/**", "/*/media/**",
                     "/*/applications/**", "/*/push/**", "/*/knocking/**", "/*/legs/**", "/*/rtc/**"]
        return try token(ttl: 6 * 3600, ["sub": .string(name),
                                         "acl": ["paths": .object(Dictionary(uniqueKeysWithValues: paths.map { ($0, JSONValue.object([:])) }))]])
    }
}

/// Switchboard answered with an error or could not be reached: the app answers 502 with the reason.
public struct UpstreamError: HTTPErrorConvertible {
    public var detail: String
    /// Switchboard's status, when it answered.
    public var upstreamStatus: Int?
    public var status: Int { 502 }
    public var title: String { "Bad Gateway" }
    public var code: String { "upstream-error" }

    public init(detail: String, upstreamStatus: Int? = nil) {
        self.detail = detail
        self.upstreamStatus = upstreamStatus
    }
}

/// Switchboard's REST API as the application calls it.
public struct SwitchboardAPI: Sendable {
    public let base: String
    public let application: ApplicationCredentials
    let client: HTTPClient

    public init(base: String, application: ApplicationCredentials, client: HTTPClient) {
        self.base = base
        self.application = application
        self.client = client
    }

    /// One request with a fresh application JWT (none when `authorized` is false: the path carries its own
    /// credentials); the reply's JSON (null for an empty body), or `UpstreamError`.
    public func call(_ method: HTTPMethod, _ path: String, body: JSONValue? = nil, form: [String: String]? = nil,
                     authorized: Bool = true) async throws -> JSONValue {
        let response: HTTPClientResponse
        do {
            var headers = HTTPHeaders()
            if authorized { headers["Authorization"] = "Bearer " + (try application.token(ttl: 300)) }
            if let form {
                headers["Content-Type"] = "application/x-www-form-urlencoded"
                let text = form.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.queryEscaped($0.value))" }.joined(separator: "&")
                response = try await client.execute(HTTPClientRequest(method: method, url: base + path, headers: headers, body: Array(text.utf8)))
            } else {
                response = try await client.send(method, base + path, headers: headers, json: body)
            }
        } catch {
            throw UpstreamError(detail: "Switchboard is unreachable: \(error)")
        }
        guard (200..<300).contains(response.status) else {
            let detail = (try? response.decode(JSONValue.self))?["detail"]?.stringValue ?? response.text
            throw UpstreamError(detail: "Switchboard answered \(response.status): \(detail)", upstreamStatus: response.status)
        }
        if response.body.isEmpty { return .null }
        guard let v = try? response.decode(JSONValue.self) else { throw UpstreamError(detail: "Switchboard answered with invalid JSON.") }
        return v
    }

    /// `s` as a query or form value: everything but letters and digits percent-encoded.
    public static func queryEscaped(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? s }
}
