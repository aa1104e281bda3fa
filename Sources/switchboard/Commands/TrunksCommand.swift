import Foundation
import Wire

/// `switchboard trunks create|list|show|update|delete` and `switchboard trunks device-password`:
/// SIP trunks and device passwords through `/v1/sip/*` with account credentials.
struct TrunksCommand {
    static let command = Command(name: "trunks", summary: "add, list and remove SIP trunks; set device SIP passwords", usage: usage) { args in
        try await run(args)
    }

    static let usage = """
    Usage:
      switchboard trunks create --host IP [--name NAME] [--port 5060] [--transport udp|tcp|tls]
                                [--username U --password P] [--register] [--allow CIDR[,CIDR...]] [--health-interval S]
                                [--media-encryption none|optional|srtp|dtls-srtp] [--dtmf rfc4733|info]
      switchboard trunks list
      switchboard trunks show --trunk ID|NAME
      switchboard trunks update --trunk ID|NAME [any create option] [--no-register]
      switchboard trunks delete --trunk ID|NAME
      switchboard trunks device-password --app-id ID --user NAME --password P

    A trunk is the carrier the server exchanges calls with over SIP. Requests from its host (and the
    addresses in --allow) are accepted; with --register the server registers with the carrier using
    the credentials and keeps the registration fresh; every --health-interval seconds (default 30,
    0 = never) an OPTIONS checks it is up. --media-encryption srtp (needs --transport tls) offers
    and requires SRTP with SDES keys on every call of the trunk; optional offers the keys and falls back to
    plain RTP when the carrier ignores them; dtls-srtp (any transport) offers and requires SRTP keyed by
    DTLS on the media ports. --dtmf info sends the keys an application presses (NCCO connect's dtmfAnswer,
    PUT /v1/calls/ID/dtmf) to the carrier in SIP INFO instead of as RFC 4733 events. Put numbers on a trunk with 'switchboard numbers buy --trunk'.
    'device-password' lets the user's SIP phone register as sip:NAME@APP-ID (digest, stored hashed).

    \(CLIEnvironment.commonUsage)
    """

    static let trunkOptions: Set<String> = ["--host", "--name", "--port", "--transport", "--username", "--password", "--register",
                                            "--no-register", "--allow", "--health-interval", "--media-encryption", "--dtmf"]

    static func run(_ argv: [String]) async throws -> Int32 {
        let args = try Arguments(argv, booleanFlags: ["--json", "--help", "-h", "--register", "--no-register"])
        let env = CLIEnvironment(args)
        let sub = args.positionals.first ?? ""
        guard args.positionals.count <= 1 else { throw CLIError("unexpected argument '\(args.positionals[1])'") }
        switch sub {
        case "create", "add":
            try args.check(known: CLIEnvironment.commonOptions.union(trunkOptions))
            _ = try args.require("--host")
            let r = try await env.client().call(.POST, "/v1/sip/trunks", body: .json(try body(args)), credentials: try AppsCommand.account(env))
            Output.print(env.json ? Output.json(r) : "created trunk \(r["name"].cell) (\(r["id"].cell))")
            return 0
        case "list", "ls":
            try args.check(known: CLIEnvironment.commonOptions)
            let r = try await env.client().call(.GET, "/v1/sip/trunks", credentials: try AppsCommand.account(env))
            let trunks = r["trunks"]?.arrayValue ?? []
            if env.json {
                Output.print(Output.json(.array(trunks)))
            } else if trunks.isEmpty {
                Output.print("no trunks")
            } else {
                Output.print(Output.table(["ID", "NAME", "HOST", "PORT", "TRANSPORT", "STATUS", "REGISTRATION"], trunks.map { t in
                    [t["id"].cell, t["name"].cell, t["host"].cell, t["port"].cell, t["transport"].cell, t["status"].cell,
                     t["registration"]?["state"].cell ?? ""]
                }))
            }
            return 0
        case "show", "get":
            try args.check(known: CLIEnvironment.commonOptions.union(["--trunk"]))
            let r = try await env.client().call(.GET, "/v1/sip/trunks/\(try args.require("--trunk"))", credentials: try AppsCommand.account(env))
            Output.print(Output.json(r))
            return 0
        case "update":
            try args.check(known: CLIEnvironment.commonOptions.union(trunkOptions).union(["--trunk"]))
            let r = try await env.client().call(.PATCH, "/v1/sip/trunks/\(try args.require("--trunk"))", body: .json(try body(args)),
                                                credentials: try AppsCommand.account(env))
            Output.print(env.json ? Output.json(r) : "updated trunk \(r["name"].cell)")
            return 0
        case "delete", "remove", "rm":
            try args.check(known: CLIEnvironment.commonOptions.union(["--trunk"]))
            let trunk = try args.require("--trunk")
            try await env.client().call(.DELETE, "/v1/sip/trunks/\(trunk)", credentials: try AppsCommand.account(env))
            Output.print(env.json ? Output.json(["deleted": .string(trunk)]) : "deleted trunk \(trunk)")
            return 0
        case "device-password":
            try args.check(known: CLIEnvironment.commonOptions.union(["--app-id", "--user", "--password"]))
            let app = try args.require("--app-id"), user = try args.require("--user")
            try await env.client().call(.PUT, "/v1/sip/devices/\(app)/\(user)",
                                        body: .json(.object(["password": .string(try args.require("--password"))])),
                                        credentials: try AppsCommand.account(env))
            Output.print(env.json ? Output.json(["user": .string(user)]) : "set the SIP password of \(user): register as sip:\(user)@\(app)")
            return 0
        case "": throw CLIError("missing subcommand (create, list, show, update, delete, device-password); see 'switchboard help trunks'")
        default: throw CLIError("unknown subcommand '\(sub)' (create, list, show, update, delete, device-password)")
        }
    }

    static func body(_ args: Arguments) throws -> JSONValue {
        var o: [String: JSONValue] = [:]
        for (flag, key) in [("--host", "host"), ("--name", "name"), ("--transport", "transport"), ("--username", "username"),
                            ("--password", "password"), ("--media-encryption", "media_encryption"), ("--dtmf", "dtmf")] {
            if let v = args[flag] { o[key] = .string(v) }
        }
        for (flag, key) in [("--port", "port"), ("--health-interval", "health_interval")] {
            if let v = args[flag] {
                guard let n = Int(v) else { throw CLIError("\(flag) needs a number") }
                o[key] = .number(Double(n))
            }
        }
        if args.flag("--register") { o["register"] = .bool(true) }
        if args.flag("--no-register") { o["register"] = .bool(false) }
        if let allow = args["--allow"] {
            o["allow"] = .array(allow.split(separator: ",").map { .string(String($0).trimmingCharacters(in: .whitespaces)) })
        }
        return .object(o)
    }
}
