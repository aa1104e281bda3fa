/// Command-line arguments: `--flag value`, `--flag=value`, boolean `--flag`, and positionals.
struct Arguments {
    var positionals: [String] = []
    var options: [String: String] = [:]
    var booleans: Set<String> = []

    /// `booleanFlags` never take a value.
    init(_ args: [String], booleanFlags: Set<String> = ["--json", "--help", "-h", "--video", "--force"]) throws {
        var i = 0
        while i < args.count {
            let a = args[i]
            if a == "--" {
                positionals.append(contentsOf: args[(i + 1)...])
                break
            }
            if a.hasPrefix("-") && a.count > 1 {
                if let eq = a.firstIndex(of: "=") {
                    options[String(a[..<eq])] = String(a[a.index(after: eq)...])
                } else if booleanFlags.contains(a) {
                    booleans.insert(a)
                } else {
                    guard i + 1 < args.count else { throw CLIError("\(a) needs a value") }
                    options[a] = args[i + 1]
                    i += 1
                }
            } else {
                positionals.append(a)
            }
            i += 1
        }
    }

    func flag(_ name: String) -> Bool { booleans.contains(name) }
    subscript(_ name: String) -> String? { options[name] }

    func require(_ name: String) throws -> String {
        guard let v = options[name], !v.isEmpty else { throw CLIError("missing \(name)") }
        return v
    }

    /// Rejects options the command does not know, so typos do not pass silently.
    func check(known: Set<String>) throws {
        for k in options.keys where !known.contains(k) { throw CLIError("unknown option \(k)") }
        for k in booleans where !known.contains(k) && k != "--help" && k != "-h" { throw CLIError("unknown option \(k)") }
    }
}

struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
