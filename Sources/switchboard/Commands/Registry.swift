import API
import Foundation

extension Commands {
    /// Client commands; a command with an empty summary is left out of `switchboard help`.
    static let extraCommands: [Command] = [
        AccountCommand.command, AppsCommand.command, NumbersCommand.command, TrunksCommand.command, UsersCommand.command, JWTCommand.command,
        VideoCommand.command, LoadCommand.command, JWTBenchCommand.command, ClientCommand.command,
    ]
}
