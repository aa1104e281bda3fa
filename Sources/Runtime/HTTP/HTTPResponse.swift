import Foundation
import Wire

/// A response: status, headers and a body that is bytes, a stream, or a WebSocket upgrade.
public struct HTTPResponse: Sendable {
    public enum Body: Sendable {
        case bytes([UInt8])
        /// Sent with chunked encoding as the closure writes.
        case stream(@Sendable (ResponseBodyWriter) async throws -> Void)
        /// Switches the connection to WebSocket after a 101.
        case upgrade(WebSocketUpgrade)
    }

    public var status: Int
    public var headers: HTTPHeaders
    public var body: Body

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = .bytes(body)
    }

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), stream: @escaping @Sendable (ResponseBodyWriter) async throws -> Void) {
        self.status = status
        self.headers = headers
        self.body = .stream(stream)
    }

    /// A JSON response from an Encodable value (keys sorted, slashes unescaped).
    public static func json<T: Encodable>(_ value: T, status: Int = 200) -> HTTPResponse {
        let body: [UInt8]
        if let flat = value as? [String: String] {
            // Small string maps (health, ids, errors) are common; JSONEncoder costs more than the request.
            body = JSONText.object(flat)
        } else {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            body = (try? encoder.encode(value)).map { [UInt8]($0) } ?? Array("null".utf8)
        }
        var r = HTTPResponse(status: status, body: body)
        r.headers["Content-Type"] = "application/json"
        return r
    }

    /// A JSON response from a JSONSerialization-compatible object.
    public static func jsonObject(_ value: Any, status: Int = 200) -> HTTPResponse {
        let data = (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("null".utf8)
        var r = HTTPResponse(status: status, body: [UInt8](data))
        r.headers["Content-Type"] = "application/json"
        return r
    }

    public static func text(_ text: String, status: Int = 200, contentType: String = "text/plain; charset=utf-8") -> HTTPResponse {
        var r = HTTPResponse(status: status, body: Array(text.utf8))
        r.headers["Content-Type"] = contentType
        return r
    }

    public static func noContent() -> HTTPResponse { HTTPResponse(status: 204) }

    public var bodyBytes: [UInt8] {
        if case .bytes(let b) = body { return b }
        return []
    }
}

/// Writes a streamed response body from any task; each write is one chunk.
public struct ResponseBodyWriter: Sendable {
    let sink: @Sendable ([UInt8]) async throws -> Void
    public func write(_ bytes: [UInt8]) async throws { if !bytes.isEmpty { try await sink(bytes) } }
    public func write(_ text: String) async throws { try await write(Array(text.utf8)) }
}

/// Writes JSON text the way `JSONEncoder` with `.sortedKeys` and `.withoutEscapingSlashes` does (RFC 8259).
enum JSONText {
    static func object(_ fields: [String: String]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(2 + fields.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 6 })
        out.append(UInt8(ascii: "{"))
        var first = true
        for key in fields.keys.sorted() {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            appendString(key, to: &out)
            out.append(UInt8(ascii: ":"))
            appendString(fields[key] ?? "", to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// A JSON string literal: quote, backslash and control characters escaped (RFC 8259 section 7).
    static func appendString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(b >> 4)], hex[Int(b & 0xF)]])
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
