import Foundation
import Wire

/// `switchboard users create|list|show|delete`: the Users API, with an application token the CLI signs itself.
struct UsersCommand {
    static let command = Command(name: "users", summary: "create, list, show and delete an application's users", usage: usage) { args in
        try await run(args)
    }

    static let usage = """
    Usage:
      switchboard users create --name NAME [--display-name TEXT] [--image-url URL]
      switchboard users list
      switchboard users show ID|NAME
      switchboard users delete ID

    The Users API belongs to an application: the CLI signs a short application JWT with its private
    key, taken from --app-id/--key-file or ./switchboard_app.json (written by 'apps create').

    Options:
      --app-id ID         application id
      --key-file FILE     the application's private key (PEM)

    \(CLIEnvironment.commonUsage)
    """

    static let appOptions: Set<String> = ["--app-id", "--key-file"]

    static func run(_ argv: [String]) async throws -> Int32 {
        let args = try Arguments(argv)
        let env = CLIEnvironment(args)
        let sub = args.positionals.first ?? ""
        let rest = Array(args.positionals.dropFirst())
        let known = CLIEnvironment.commonOptions.union(appOptions)
        switch sub {
        case "create":
            try args.check(known: known.union(["--name", "--display-name", "--image-url"]))
            guard rest.isEmpty else { throw CLIError("unexpected argument '\(rest[0])' (the name goes in --name)") }
            return try await create(env)
        case "list", "ls":
            try args.check(known: known)
            return try await list(env)
        case "show", "get":
            try args.check(known: known)
            return try await show(env, id: try AppsCommand.one(rest, "ID"))
        case "delete", "rm":
            try args.check(known: known)
            return try await delete(env, id: try AppsCommand.one(rest, "ID"))
        case "": throw CLIError("missing subcommand (create, list, show, delete); see 'switchboard help users'")
        default: throw CLIError("unknown subcommand '\(sub)' (create, list, show, delete)")
        }
    }

    static func appToken(_ env: CLIEnvironment) throws -> ServerClient.Credentials {
        let app = try AppCredentials.resolve(env.args)
        return .bearer(try app.token(ttl: 300).0)
    }

    static func row(_ u: JSONValue) -> [String] { [u["id"].cell, u["name"].cell, u["display_name"].cell] }

    static func create(_ env: CLIEnvironment) async throws -> Int32 {
        var body: [String: JSONValue] = ["name": .string(try env.args.require("--name"))]
        if let d = env.args["--display-name"] { body["display_name"] = .string(d) }
        if let i = env.args["--image-url"] { body["image_url"] = .string(i) }
        let user = try await env.client().call(.POST, "/v1/users", body: .json(.object(body)), credentials: try appToken(env))
        Output.print(env.json ? Output.json(user) : Output.fields(zip(["id", "name", "display_name"], row(user)).map { ($0, $1) }))
        return 0
    }

    static func list(_ env: CLIEnvironment) async throws -> Int32 {
        let client = try env.client()
        let creds = try appToken(env)
        var users: [JSONValue] = []
        var cursor: String?
        repeat {
            var query = [("page_size", "100")]
            if let cursor { query.append(("cursor", cursor)) }
            let r = try await client.call(.GET, "/v1/users", query: query, credentials: creds)
            users += r["_embedded"]?["users"]?.arrayValue ?? []
            cursor = r["_links"]?["next"]?["href"]?.stringValue.flatMap { href in
                URLComponents(string: href)?.queryItems?.first { $0.name == "cursor" }?.value
            }
        } while cursor != nil && users.count < 1_000_000
        if env.json {
            Output.print(Output.json(.array(users)))
        } else if users.isEmpty {
            Output.print("no users")
        } else {
            Output.print(Output.table(["ID", "NAME", "DISPLAY NAME"], users.map(row)))
        }
        return 0
    }

    static func show(_ env: CLIEnvironment, id: String) async throws -> Int32 {
        let user = try await env.client().call(.GET, "/v1/users/\(AppsCommand.pathSegment(id))", credentials: try appToken(env))
        if env.json {
            Output.print(Output.json(user))
        } else {
            var pairs = zip(["id", "name", "display_name"], row(user)).map { ($0, $1) }
            pairs.append(("image_url", user["image_url"].cell))
            if let custom = user["properties"]?["custom_data"], custom != .object([:]) { pairs.append(("custom_data", custom.cell)) }
            Output.print(Output.fields(pairs))
        }
        return 0
    }

    static func delete(_ env: CLIEnvironment, id: String) async throws -> Int32 {
        try await env.client().call(.DELETE, "/v1/users/\(AppsCommand.pathSegment(id))", credentials: try appToken(env))
        Output.print(env.json ? Output.json(["deleted": .string(id)]) : "deleted user \(id)")
        return 0
    }
}
