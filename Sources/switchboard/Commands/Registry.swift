extension Commands { static let extraCommands: [Command] = [] }
