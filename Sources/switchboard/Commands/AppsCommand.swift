import Foundation
import Wire

/// `switchboard apps create|list|show|update|delete|link`: the Applications API v2 with account credentials.
struct AppsCommand {
    static let command = Command(name: "apps", summary: "create, list, show, update, delete and link applications", usage: usage) { args in
        try await run(args)
    }

    static let usage = """
    Usage:
      switchboard apps create NAME [capability options] [--public-key-file FILE] [--force]
      switchboard apps list
      switchboard apps show ID
      switchboard apps update ID [--name NAME] [capability options] [--no-video]
      switchboard apps delete ID
      switchboard apps link ID --number MSISDN [--country CC]

    'create' writes ./switchboard_app.json (id, name, private_key) and ./NAME.key (mode 0600): the
    private key is only ever shown in the create response. Existing files are kept unless --force.
    With --public-key-file the server keeps your public key and no private key is written.
    'link' routes calls to a number (see 'switchboard numbers') to the application.

    Capability options:
      --voice-answer-url URL      voice answer webhook (returns the NCCO)
      --voice-answer-method M     GET (default) or POST
      --voice-event-url URL       voice event webhook (POST)
      --voice-fallback-url URL    voice fallback answer webhook
      --rtc-event-url URL         RTC (conversation) event webhook (POST)
      --video                     enable the video capability

    \(CLIEnvironment.commonUsage)
    """

    static let capabilityOptions: Set<String> = ["--voice-answer-url", "--voice-answer-method", "--voice-event-url",
                                                 "--voice-fallback-url", "--rtc-event-url", "--video"]

    static func run(_ argv: [String]) async throws -> Int32 {
        let args = try Arguments(argv, booleanFlags: ["--json", "--help", "-h", "--video", "--no-video", "--force"])
        let sub = args.positionals.first ?? ""
        let rest = Array(args.positionals.dropFirst())
        let env = CLIEnvironment(args)
        switch sub {
        case "create":
            try args.check(known: CLIEnvironment.commonOptions.union(capabilityOptions).union(["--public-key-file", "--force"]))
            return try await create(env, name: try one(rest, "NAME"))
        case "list", "ls":
            try args.check(known: CLIEnvironment.commonOptions)
            return try await list(env)
        case "show", "get":
            try args.check(known: CLIEnvironment.commonOptions)
            return try await show(env, id: try one(rest, "ID"))
        case "update":
            try args.check(known: CLIEnvironment.commonOptions.union(capabilityOptions).union(["--name", "--no-video"]))
            return try await update(env, id: try one(rest, "ID"))
        case "delete", "rm":
            try args.check(known: CLIEnvironment.commonOptions)
            return try await delete(env, id: try one(rest, "ID"))
        case "link":
            try args.check(known: CLIEnvironment.commonOptions.union(["--number", "--country"]))
            return try await link(env, id: try one(rest, "ID"))
        case "": throw CLIError("missing subcommand (create, list, show, update, delete, link); see 'switchboard help apps'")
        default: throw CLIError("unknown subcommand '\(sub)' (create, list, show, update, delete, link)")
        }
    }

    static func one(_ positionals: [String], _ what: String) throws -> String {
        guard let first = positionals.first else { throw CLIError("missing \(what)") }
        guard positionals.count == 1 else { throw CLIError("unexpected argument '\(positionals[1])'") }
        return first
    }

    static func account(_ env: CLIEnvironment) throws -> ServerClient.Credentials {
        let (k, s) = try env.accountCredentials()
        return .basic(key: k, secret: s)
    }

    /// Applies the capability flags to `capabilities` (creating what is missing, keeping the rest).
    static func applyCapabilities(_ args: Arguments, to capabilities: JSONValue) throws -> JSONValue {
        var caps = capabilities.objectValue ?? [:]
        func hook(_ url: String, method: String) throws -> JSONValue {
            guard let u = URLComponents(string: url), ["http", "https"].contains(u.scheme?.lowercased() ?? ""), u.host?.isEmpty == false else {
                throw CLIError("\(url) is not an http or https URL")
            }
            return .object(["address": .string(url), "http_method": .string(method)])
        }
        var voiceHooks = caps["voice"]?["webhooks"]?.objectValue ?? [:]
        var touchedVoice = false
        let answerMethod = (args["--voice-answer-method"] ?? voiceHooks["answer_url"]?["http_method"]?.stringValue ?? "GET").uppercased()
        guard ["GET", "POST"].contains(answerMethod) else { throw CLIError("--voice-answer-method must be GET or POST") }
        if let u = args["--voice-answer-url"] {
            voiceHooks["answer_url"] = try hook(u, method: answerMethod)
            touchedVoice = true
        } else if args["--voice-answer-method"] != nil {
            guard let existing = voiceHooks["answer_url"]?["address"]?.stringValue else {
                throw CLIError("--voice-answer-method needs --voice-answer-url")
            }
            voiceHooks["answer_url"] = try hook(existing, method: answerMethod)
            touchedVoice = true
        }
        if let u = args["--voice-event-url"] {
            voiceHooks["event_url"] = try hook(u, method: "POST")
            touchedVoice = true
        }
        if let u = args["--voice-fallback-url"] {
            voiceHooks["fallback_answer_url"] = try hook(u, method: answerMethod)
            touchedVoice = true
        }
        if touchedVoice {
            var voice = caps["voice"]?.objectValue ?? [:]
            voice["webhooks"] = .object(voiceHooks)
            caps["voice"] = .object(voice)
        }
        if let u = args["--rtc-event-url"] {
            var rtc = caps["rtc"]?.objectValue ?? [:]
            var hooks = rtc["webhooks"]?.objectValue ?? [:]
            hooks["event_url"] = try hook(u, method: "POST")
            rtc["webhooks"] = .object(hooks)
            caps["rtc"] = .object(rtc)
        }
        if args.flag("--video") && caps["video"] == nil { caps["video"] = .object([:]) }
        if args.flag("--no-video") { caps["video"] = nil }
        return .object(caps)
    }

    static func create(_ env: CLIEnvironment, name: String) async throws -> Int32 {
        let args = env.args
        var body: [String: JSONValue] = ["name": .string(name), "capabilities": try applyCapabilities(args, to: .object([:]))]
        if let path = args["--public-key-file"] {
            guard let data = FileManager.default.contents(atPath: path) else { throw CLIError("cannot read \(path)") }
            body["keys"] = .object(["public_key": .string(String(decoding: data, as: UTF8.self))])
        }
        let keyFile = keyFileName(name)
        // Checked before the call: once the server made the key, it cannot be shown again.
        if !args.flag("--force") {
            for f in [AppCredentials.appFile, keyFile] where FileManager.default.fileExists(atPath: f) {
                throw CLIError("\(f) already exists here (use --force to replace it, or run in another directory)")
            }
        }
        let app = try await env.client().call(.POST, "/v2/applications", body: .json(.object(body)), credentials: try account(env))
        guard let id = app["id"]?.stringValue else { throw CLIError("the server's answer has no application id") }
        let privateKey = app["keys"]?["private_key"]?.stringValue
        var appFile: [String: JSONValue] = ["id": .string(id), "name": .string(name)]
        if let privateKey {
            appFile["private_key"] = .string(privateKey)
            try write(keyFile, privateKey)
        }
        try write(AppCredentials.appFile, Output.json(.object(appFile)) + "\n")
        if env.json {
            Output.print(Output.json(app))
        } else {
            var pairs = [("id", id), ("name", name)] + capabilityLines(app["capabilities"])
            pairs.append(("saved", privateKey != nil ? "\(AppCredentials.appFile), \(keyFile)" : AppCredentials.appFile))
            Output.print(Output.fields(pairs))
        }
        return 0
    }

    /// `NAME.key` with characters that would leave the directory replaced.
    static func keyFileName(_ name: String) -> String {
        let safe = name.map { $0 == "/" || $0 == "\\" || $0 == "\0" ? "_" : $0 }
        let s = String(safe)
        return (s.hasPrefix(".") ? "_" + s.dropFirst() : s) + ".key"
    }

    /// Creates (or replaces) a file readable by its owner only.
    static func write(_ path: String, _ text: String) throws {
        try? FileManager.default.removeItem(atPath: path)
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw CLIError("cannot write \(path)")
        }
    }

    static func list(_ env: CLIEnvironment) async throws -> Int32 {
        let client = try env.client()
        let creds = try account(env)
        var apps: [JSONValue] = []
        var page = 1
        while true {
            let r = try await client.call(.GET, "/v2/applications", query: [("page_size", "100"), ("page", String(page))], credentials: creds)
            apps += r["_embedded"]?["applications"]?.arrayValue ?? []
            let pages = r["total_pages"]?.intValue ?? 1
            if page >= pages || page >= 10_000 { break }
            page += 1
        }
        if env.json {
            Output.print(Output.json(.array(apps)))
        } else if apps.isEmpty {
            Output.print("no applications")
        } else {
            Output.print(Output.table(["ID", "NAME", "CAPABILITIES"], apps.map { a in
                [a["id"].cell, a["name"].cell, (a["capabilities"]?.objectValue?.keys.sorted() ?? []).joined(separator: ",")]
            }))
        }
        return 0
    }

    static func capabilityLines(_ caps: JSONValue?) -> [(String, String)] {
        var lines: [(String, String)] = []
        func hook(_ label: String, _ h: JSONValue?) {
            guard let address = h?["address"]?.stringValue else { return }
            lines.append((label, "\(h?["http_method"]?.stringValue ?? "POST") \(address)"))
        }
        let voiceHooks = caps?["voice"]?["webhooks"]
        hook("voice answer", voiceHooks?["answer_url"])
        hook("voice fallback", voiceHooks?["fallback_answer_url"])
        hook("voice event", voiceHooks?["event_url"])
        if caps?["voice"]?["signed_callbacks"]?.boolValue == true { lines.append(("signed callbacks", "yes")) }
        hook("rtc event", caps?["rtc"]?["webhooks"]?["event_url"])
        if caps?["video"] != nil { lines.append(("video", "yes")) }
        return lines
    }

    static func show(_ env: CLIEnvironment, id: String) async throws -> Int32 {
        let app = try await env.client().call(.GET, "/v2/applications/\(pathSegment(id))", credentials: try account(env))
        if env.json {
            Output.print(Output.json(app))
        } else {
            var pairs = [("id", app["id"].cell), ("name", app["name"].cell)] + capabilityLines(app["capabilities"])
            pairs.append(("public key", (app["keys"]?["public_key"]?.stringValue).map { _ in "RSA, PEM in the --json output" } ?? "-"))
            Output.print(Output.fields(pairs))
        }
        return 0
    }

    static func update(_ env: CLIEnvironment, id: String) async throws -> Int32 {
        let client = try env.client()
        let creds = try account(env)
        let path = "/v2/applications/\(pathSegment(id))"
        let current = try await client.call(.GET, path, credentials: creds)
        let name = env.args["--name"] ?? current["name"]?.stringValue ?? ""
        let caps = try applyCapabilities(env.args, to: current["capabilities"] ?? .object([:]))
        let app = try await client.call(.PUT, path, body: .json(["name": .string(name), "capabilities": caps]), credentials: creds)
        if env.json {
            Output.print(Output.json(app))
        } else {
            Output.print(Output.fields([("id", app["id"].cell), ("name", app["name"].cell)] + capabilityLines(app["capabilities"])))
        }
        return 0
    }

    static func delete(_ env: CLIEnvironment, id: String) async throws -> Int32 {
        try await env.client().call(.DELETE, "/v2/applications/\(pathSegment(id))", credentials: try account(env))
        Output.print(env.json ? Output.json(["deleted": .string(id)]) : "deleted application \(id)")
        return 0
    }

    static func link(_ env: CLIEnvironment, id: String) async throws -> Int32 {
        let number = try env.args.require("--number")
        var form = [("msisdn", number), ("app_id", id)]
        if let c = env.args["--country"] { form.append(("country", c)) }
        try await env.client().call(.POST, "/number/update", body: .form(form), credentials: try account(env))
        Output.print(env.json ? Output.json(["msisdn": .string(number), "app_id": .string(id)]) : "linked \(number) to application \(id)")
        return 0
    }

    /// Percent-encodes an id for use as one path segment.
    static func pathSegment(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? s
    }
}
