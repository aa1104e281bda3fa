import Foundation
import Platform
import Wire

/// `switchboard account [show]` and `switchboard account rotate-secret`.
struct AccountCommand {
    static let command = Command(name: "account", summary: "show the account key and secret, or rotate the secret", usage: usage) { args in
        try await run(args)
    }

    static let usage = """
    Usage:
      switchboard account [show]            show the api key and secret
      switchboard account rotate-secret     make a new secret (offline, on the data directory)

    'show' reads <data>/account.json. Without that file, credentials given by --api-key/--api-secret
    or the environment are checked against the server instead.

    'rotate-secret' works on the data directory directly, so it also works while the server is down;
    a running server on that directory sees the new secret at once. The previous secret keeps
    working for 24 hours, so app servers can be redeployed with the new one without downtime;
    after that only the new secret is accepted. Rotating again ends the old secret's grace at once.

    Options:
      --data DIR          data directory (SWITCHBOARD_DATA, default ./.switchboard)
      --json              machine-readable output

    \(CLIEnvironment.commonUsage)
    """

    static func run(_ argv: [String]) async throws -> Int32 {
        let args = try Arguments(argv)
        try args.check(known: CLIEnvironment.commonOptions)
        let env = CLIEnvironment(args)
        switch args.positionals.first ?? "show" {
        case "show": return try await show(env)
        case "rotate-secret": return try rotate(env)
        case let other: throw CLIError("unknown subcommand '\(other)' (show, rotate-secret)")
        }
    }

    static func show(_ env: CLIEnvironment) async throws -> Int32 {
        if let file = try env.accountFileContents(), let key = file["api_key"] as? String, let secret = file["api_secret"] as? String {
            var obj: [String: JSONValue] = ["api_key": .string(key), "api_secret": .string(secret), "source": .string(env.accountFile)]
            var pairs = [("api_key", key), ("api_secret", secret)]
            if let until = file["previous_secret_expires_at"] as? String, let date = ISO8601DateFormatter.parseAPI(until), date > Date() {
                obj["previous_secret_expires_at"] = .string(until)
                pairs.append(("previous secret valid until", until))
            }
            pairs.append(("file", env.accountFile))
            Output.print(env.json ? Output.json(.object(obj)) : Output.fields(pairs))
            return 0
        }
        // No file: check the given credentials against the server (any account-level call will do).
        let (key, secret) = try env.accountCredentials()
        try await env.client().call(.GET, "/account/numbers", query: [("size", "1")], credentials: .basic(key: key, secret: secret))
        if env.json {
            Output.print(Output.json(["api_key": .string(key), "source": .string(env.serverURL), "valid": true]))
        } else {
            Output.print(Output.fields([("api_key", key), ("api_secret", "(given; accepted by \(env.serverURL))")]))
        }
        return 0
    }

    static func rotate(_ env: CLIEnvironment) throws -> Int32 {
        let dir = env.dataDirectory
        guard FileManager.default.fileExists(atPath: dir + "/switchboard.db") else {
            throw CLIError("no server data in \(dir) (run 'switchboard serve --data \(dir)' once, or pass --data)")
        }
        let core = try PlatformCore(dataDirectory: dir)
        let apiKey: String
        if let given = env.args["--api-key"] ?? env.environment["SWITCHBOARD_API_KEY"], !given.isEmpty {
            apiKey = given
        } else {
            guard let primary = try core.accounts.primary() else { throw CLIError("the data directory \(dir) has no account yet") }
            apiKey = primary.apiKey
        }
        let account: Account
        do { account = try core.accounts.rotateSecret(apiKey: apiKey) } catch PlatformError.notFound {
            throw CLIError("no account \(apiKey) in \(dir)")
        }
        let until = account.previousSecretExpiresAt?.iso8601 ?? "-"
        if env.json {
            Output.print(Output.json(["api_key": .string(account.apiKey), "api_secret": .string(account.apiSecret),
                                      "previous_secret_expires_at": .string(until)]))
        } else {
            Output.print(Output.fields([("api_key", account.apiKey), ("api_secret", account.apiSecret),
                                        ("previous secret valid until", until), ("file", core.accounts.accountFile)]))
        }
        return 0
    }
}

extension ISO8601DateFormatter {
    /// Reads the API's timestamps (with or without fractional seconds).
    static func parseAPI(_ s: String) -> Date? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let d = f.date(from: s) { return d }
        f.formatOptions = [.withInternetDateTime]
        return f.date(from: s)
    }
}
