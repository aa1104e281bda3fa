/// One `switchboard` subcommand.
struct Command: Sendable {
    let name: String
    let summary: String
    let usage: String
    let run: @Sendable ([String]) async throws -> Int32
}

enum Commands {
    static let all: [Command] = [ServeCommand.command, VersionCommand.command] + extraCommands

    static func find(_ name: String) -> Command? { all.first { $0.name == name } }

    static func helpText() -> String {
        var s = """
        switchboard — self-hosted voice, video and audio rooms

        Usage: switchboard <command> [options]

        Commands:

        """
        for c in all where !c.summary.isEmpty { s += "  " + c.name.padding(toLength: 12, withPad: " ", startingAt: 0) + c.summary + "\n" }
        s += "  help        show help for a command\n\nRun 'switchboard help <command>' for its options.\n"
        return s
    }
}

struct VersionCommand {
    static let command = Command(name: "version", summary: "print the version", usage: "switchboard version") { _ in
        print("switchboard \(SwitchboardServer.version)")
        return 0
    }
}

import API
import Foundation
