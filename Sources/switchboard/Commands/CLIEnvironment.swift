import Foundation

/// Where a client command finds the server, the account credentials and the data directory:
/// flags first, then `SWITCHBOARD_*` environment variables, then `<data>/account.json`.
struct CLIEnvironment {
    /// Options every client command accepts.
    static let commonOptions: Set<String> = ["--server", "--api-key", "--api-secret", "--data", "--ca", "--json"]

    static let commonUsage = """
    Server and credentials (every client command):
      --server URL        server base URL (SWITCHBOARD_URL, default http://127.0.0.1:8080)
      --api-key KEY       account api key (SWITCHBOARD_API_KEY)
      --api-secret SECRET account api secret (SWITCHBOARD_API_SECRET)
      --data DIR          data directory holding account.json (SWITCHBOARD_DATA, default ./.switchboard)
      --ca FILE           CA certificate for an https server (SWITCHBOARD_CA, default <data>/tls/ca.pem if present)
      --json              machine-readable JSON output
    """

    let args: Arguments
    let environment: [String: String]

    init(_ args: Arguments, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.args = args
        self.environment = environment
    }

    var json: Bool { args.flag("--json") }

    private func value(_ flag: String, _ env: String) -> String? {
        if let v = args[flag], !v.isEmpty { return v }
        if let v = environment[env], !v.isEmpty { return v }
        return nil
    }

    var serverURL: String {
        var s = value("--server", "SWITCHBOARD_URL") ?? "http://127.0.0.1:8080"
        while s.hasSuffix("/") { s.removeLast() }
        return s
    }

    var dataDirectory: String { value("--data", "SWITCHBOARD_DATA") ?? "./.switchboard" }

    /// The CA to trust for https: given explicitly, or the development CA `serve` generated in the data directory.
    var caFile: String? {
        if let given = value("--ca", "SWITCHBOARD_CA") { return given }
        let dev = dataDirectory + "/tls/ca.pem"
        return FileManager.default.fileExists(atPath: dev) ? dev : nil
    }

    var accountFile: String { dataDirectory + "/account.json" }

    /// The account file's contents, if there is one.
    func accountFileContents() throws -> [String: Any]? {
        guard let data = FileManager.default.contents(atPath: accountFile) else { return nil }
        guard let obj = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw CLIError("\(accountFile) is not a JSON object")
        }
        return obj
    }

    /// Account key and secret: flags, environment, or the account file.
    func accountCredentials() throws -> (key: String, secret: String) {
        let key = value("--api-key", "SWITCHBOARD_API_KEY")
        let secret = value("--api-secret", "SWITCHBOARD_API_SECRET")
        if let key, let secret { return (key, secret) }
        if let file = try accountFileContents(), let k = file["api_key"] as? String, let s = file["api_secret"] as? String {
            // A key given alone must match the file, or the secret would belong to another account.
            if let key, key != k { throw CLIError("no secret for api key \(key): pass --api-secret or SWITCHBOARD_API_SECRET") }
            return (k, secret ?? s)
        }
        throw CLIError("no account credentials: pass --api-key and --api-secret, set SWITCHBOARD_API_KEY and SWITCHBOARD_API_SECRET, or point --data at the server's data directory")
    }

    func client() throws -> ServerClient {
        try ServerClient(baseURL: serverURL, caFile: caFile)
    }
}
