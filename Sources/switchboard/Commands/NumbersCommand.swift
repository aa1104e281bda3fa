import Foundation
import Wire

/// `switchboard numbers buy|list|cancel`: the Numbers API with account credentials.
struct NumbersCommand {
    static let command = Command(name: "numbers", summary: "add, list and remove the account's phone numbers", usage: usage) { args in
        try await run(args)
    }

    static let usage = """
    Usage:
      switchboard numbers buy --country CC --number MSISDN [--trunk TRUNK-ID|NAME]
      switchboard numbers trunk --number MSISDN --trunk TRUNK-ID|NAME   (an empty --trunk "" takes it off)
      switchboard numbers list [--app-id ID]
      switchboard numbers cancel --number MSISDN

    A number is an E.164 number you own on your SIP trunk (digits, no '+'); 'buy' registers it with
    the server, 'cancel' removes it. Link one to an application with 'switchboard apps link'.

    \(CLIEnvironment.commonUsage)
    """

    static func run(_ argv: [String]) async throws -> Int32 {
        let args = try Arguments(argv)
        let env = CLIEnvironment(args)
        let sub = args.positionals.first ?? ""
        guard args.positionals.count <= 1 else { throw CLIError("unexpected argument '\(args.positionals[1])'") }
        switch sub {
        case "buy", "add":
            try args.check(known: CLIEnvironment.commonOptions.union(["--country", "--number", "--trunk"]))
            let country = try args.require("--country")
            let number = try args.require("--number")
            var form = [("country", country), ("msisdn", number)]
            if let trunk = args["--trunk"] { form.append(("trunk_id", trunk)) }
            try await env.client().call(.POST, "/number/buy", body: .form(form), credentials: try AppsCommand.account(env))
            Output.print(env.json ? Output.json(["msisdn": .string(number), "country": .string(country.uppercased())]) : "added \(number) (\(country.uppercased()))")
            return 0
        case "trunk":
            try args.check(known: CLIEnvironment.commonOptions.union(["--number", "--trunk"]))
            let number = try args.require("--number")
            guard let trunk = args["--trunk"] else { throw CLIError("missing --trunk") }
            try await env.client().call(.POST, "/number/update", body: .form([("msisdn", number), ("trunk_id", trunk)]),
                                        credentials: try AppsCommand.account(env))
            Output.print(env.json ? Output.json(["msisdn": .string(number), "trunk_id": .string(trunk)])
                                  : trunk.isEmpty ? "\(number) is on no trunk" : "\(number) is on trunk \(trunk)")
            return 0
        case "list", "ls":
            try args.check(known: CLIEnvironment.commonOptions.union(["--app-id"]))
            return try await list(env)
        case "cancel", "remove":
            try args.check(known: CLIEnvironment.commonOptions.union(["--number", "--country"]))
            let number = try args.require("--number")
            var form = [("msisdn", number)]
            if let c = args["--country"] { form.append(("country", c)) }
            try await env.client().call(.POST, "/number/cancel", body: .form(form), credentials: try AppsCommand.account(env))
            Output.print(env.json ? Output.json(["cancelled": .string(number)]) : "removed \(number)")
            return 0
        case "": throw CLIError("missing subcommand (buy, list, cancel); see 'switchboard help numbers'")
        default: throw CLIError("unknown subcommand '\(sub)' (buy, list, cancel)")
        }
    }

    static func list(_ env: CLIEnvironment) async throws -> Int32 {
        let client = try env.client()
        let creds = try AppsCommand.account(env)
        var numbers: [JSONValue] = []
        var index = 1
        while true {
            var query = [("size", "100"), ("index", String(index))]
            if let app = env.args["--app-id"] { query.append(("application_id", app)) }
            let r = try await client.call(.GET, "/account/numbers", query: query, credentials: creds)
            let page = r["numbers"]?.arrayValue ?? []
            numbers += page
            if page.count < 100 || numbers.count >= (r["count"]?.intValue ?? 0) || index >= 10_000 { break }
            index += 1
        }
        if env.json {
            Output.print(Output.json(.array(numbers)))
        } else if numbers.isEmpty {
            Output.print("no numbers")
        } else {
            Output.print(Output.table(["NUMBER", "COUNTRY", "APPLICATION", "TRUNK"], numbers.map { n in
                [n["msisdn"].cell, n["country"].cell, n["app_id"].cell, n["trunk_id"].cell]
            }))
        }
        return 0
    }
}
