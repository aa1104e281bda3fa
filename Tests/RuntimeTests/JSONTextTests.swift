import Foundation
import Testing
@testable import Runtime

/// The fast path for string maps must produce what JSONEncoder would.
@Suite("JSON text for string maps")
struct JSONTextTests {
    static let maps: [[String: String]] = [
        [:],
        ["status": "ok", "version": "0.1.0"],
        ["b": "1", "a": "2", "A": "3", "a10": "4", "a2": "5", "_x": "6", "é": "7", "Z": "8"],
        ["quote": "say \"hi\"", "slash": "a/b\\c", "ctl": "line\nnext\r\t\u{08}\u{0C}\u{01}\u{1F}", "uni": "héllo ✓ 😀 \u{2028}"],
    ]

    @Test("matches JSONEncoder with sorted keys and unescaped slashes", arguments: maps)
    func matchesEncoder(_ map: [String: String]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let expected = try [UInt8](encoder.encode(map))
        #expect(String(decoding: JSONText.object(map), as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        #expect(HTTPResponse.json(map).bodyBytes == expected)
    }
}
