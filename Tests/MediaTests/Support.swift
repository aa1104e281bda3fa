import Crypto
import Foundation
import Wire

/// Loads a fixture from Tests/Fixtures relative to this source file.
func mediaFixture(_ relativePath: String) throws -> String {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    return try String(contentsOf: root.appendingPathComponent("Fixtures").appendingPathComponent(relativePath), encoding: .utf8)
}

func hmacSHA1(_ key: [UInt8], _ data: [UInt8]) -> [UInt8] { HMAC.sha1(key: key, data: data) }

/// Milliseconds as the packet clock's nanoseconds.
func ms(_ value: UInt64) -> UInt64 { value * 1_000_000 }
