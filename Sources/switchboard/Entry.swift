import Foundation

enum Entry {
    static func run(_ argv: [String]) async -> Int32 {
        guard let name = argv.first, name != "--help", name != "-h" else {
            print(Commands.helpText(), terminator: "")
            return argv.isEmpty ? 2 : 0
        }
        if name == "help" {
            if argv.count > 1 {
                guard let c = Commands.find(argv[1]) else {
                    FileHandle.standardError.write(Data("switchboard: unknown command '\(argv[1])'\n".utf8))
                    return 2
                }
                print(c.usage)
            } else {
                print(Commands.helpText(), terminator: "")
            }
            return 0
        }
        if name == "--version" { return (try? await Commands.find("version")!.run([])) ?? 1 }
        guard let command = Commands.find(name) else {
            FileHandle.standardError.write(Data("switchboard: unknown command '\(name)' (see 'switchboard help')\n".utf8))
            return 2
        }
        let rest = Array(argv.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            print(command.usage)
            return 0
        }
        do {
            return try await command.run(rest)
        } catch {
            FileHandle.standardError.write(Data("switchboard \(name): \(error)\n".utf8))
            return 1
        }
    }
}
