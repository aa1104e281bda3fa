/// One of the 16 DTMF keys, with its RFC 4733 event code (0–15) and its two tones (ITU-T Q.23).
public enum DTMFDigit: UInt8, Sendable, Hashable, CaseIterable {
    case d0 = 0, d1, d2, d3, d4, d5, d6, d7, d8, d9
    case star = 10, pound = 11, a = 12, b = 13, c = 14, d = 15

    /// Row (low group) frequencies in Hz.
    public static let rowFrequencies: [Double] = [697, 770, 852, 941]
    /// Column (high group) frequencies in Hz.
    public static let columnFrequencies: [Double] = [1209, 1336, 1477, 1633]
    /// The keypad, row by row.
    static let keypad: [[DTMFDigit]] = [[.d1, .d2, .d3, .a], [.d4, .d5, .d6, .b], [.d7, .d8, .d9, .c], [.star, .d0, .pound, .d]]

    public init?(character: Character) {
        switch character {
        case "0"..."9": self.init(rawValue: UInt8(String(character))!)
        case "*": self = .star
        case "#": self = .pound
        case "A", "a": self = .a
        case "B", "b": self = .b
        case "C", "c": self = .c
        case "D", "d": self = .d
        default: return nil
        }
    }

    /// The key as typed: "0"…"9", "*", "#", "A"…"D".
    public var character: Character {
        switch self {
        case .star: "*"
        case .pound: "#"
        case .a: "A"
        case .b: "B"
        case .c: "C"
        case .d: "D"
        default: Character(String(rawValue))
        }
    }

    static func at(row: Int, column: Int) -> DTMFDigit { keypad[row][column] }

    var position: (row: Int, column: Int) {
        for r in 0..<4 { for c in 0..<4 where Self.keypad[r][c] == self { return (r, c) } }
        preconditionFailure("every digit is on the keypad")
    }

    public var rowFrequency: Double { Self.rowFrequencies[position.row] }
    public var columnFrequency: Double { Self.columnFrequencies[position.column] }
}
