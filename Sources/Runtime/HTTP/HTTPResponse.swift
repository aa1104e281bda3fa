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

    /// A JSON response from an Encodable value.
    public static func json<T: Encodable>(_ value: T, status: Int = 200) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("null".utf8)
        var r = HTTPResponse(status: status, body: [UInt8](data))
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
