import Foundation
import Wire

/// What client commands print: aligned tables for people, JSON for scripts.
enum Output {
    /// Columns padded to their widest cell; the last column is not padded.
    static func table(_ headers: [String], _ rows: [[String]]) -> String {
        var widths = headers.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            var s = ""
            for (i, cell) in cells.enumerated() {
                if i == cells.count - 1 { s += cell } else { s += cell.padding(toLength: widths[i] + 2, withPad: " ", startingAt: 0) }
            }
            return s
        }
        return ([line(headers)] + rows.map(line)).joined(separator: "\n")
    }

    /// `key: value` lines with the keys aligned.
    static func fields(_ pairs: [(String, String)]) -> String {
        let width = pairs.map(\.0.count).max() ?? 0
        return pairs.map { ($0.0 + ":").padding(toLength: width + 2, withPad: " ", startingAt: 0) + $0.1 }.joined(separator: "\n")
    }

    /// Pretty JSON with sorted keys, so scripts and diffs see a stable shape.
    static func json(_ value: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    static func print(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func warn(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

extension JSONValue {
    /// A cell for a table: strings as they are, absent or null as "-".
    var cell: String {
        switch self {
        case .null: "-"
        case .string(let s): s
        case .bool(let b): b ? "yes" : "no"
        case .number(let n): n.rounded() == n && abs(n) < 1e15 ? String(Int(n)) : String(n)
        default: Output.json(self).replacingOccurrences(of: "\n", with: " ")
        }
    }
}

extension Optional where Wrapped == JSONValue {
    var cell: String { self?.cell ?? "-" }
}
