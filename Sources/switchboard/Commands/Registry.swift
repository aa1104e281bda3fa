extension Commands { static let extraCommands: [Command] = [LoadCommand.command, VideoCommand.command] }
