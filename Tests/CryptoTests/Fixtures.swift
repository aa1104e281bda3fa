import Foundation

/// Reads files from Tests/Fixtures, located relative to this source file so no
/// bundle resources are needed.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// A fixture file with surrounding whitespace removed (tokens end in a newline).
    static func line(_ path: String) throws -> String {
        try text(path).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
