import Crypto
import Foundation
import Synchronization
import Wire

/// What happens on a WebSocket, delivered on its loop thread in order.
public struct WebSocketCallbacks: Sendable {
    public var onOpen: @Sendable (WebSocket) -> Void = { _ in }
    public var onText: @Sendable (WebSocket, String) -> Void = { _, _ in }
    public var onBinary: @Sendable (WebSocket, [UInt8]) -> Void = { _, _ in }
    public var onPong: @Sendable (WebSocket, [UInt8]) -> Void = { _, _ in }
    /// Called once when the socket is gone: the peer's close code (1006 if the TCP connection just dropped).
    public var onClose: @Sendable (WebSocket, UInt16, String) -> Void = { _, _, _ in }
    public init() {}
}

/// A server-side upgrade: return it from a route as `HTTPResponse.webSocket(...)`.
public struct WebSocketUpgrade: Sendable {
    public var callbacks: WebSocketCallbacks
    public var maxMessageSize: Int?
    public init(callbacks: WebSocketCallbacks, maxMessageSize: Int? = nil) {
        self.callbacks = callbacks
        self.maxMessageSize = maxMessageSize
    }
}

/// A handle to one WebSocket that any thread may use; work hops to the socket's loop.
public final class WebSocket: Sendable, Hashable {
    public let id: UInt64
    public let remoteAddress: SocketAddress?
    let loop: EventLoop
    // The connection is touched only on `loop`; the box is written once before the handle escapes.
    private let connection: Mutex<WebSocketConnection?>
    private static let ids = Atomic<UInt64>(0)

    init(loop: EventLoop, remoteAddress: SocketAddress?) {
        id = Self.ids.wrappingAdd(1, ordering: .relaxed).newValue
        self.loop = loop
        self.remoteAddress = remoteAddress
        connection = Mutex(nil)
    }

    func attach(_ c: WebSocketConnection?) { connection.withLock { $0 = c } }

    private func onLoop(_ body: @escaping @Sendable (WebSocketConnection) -> Void) {
        if loop.inLoop, let c = connection.withLock({ $0 }) {
            body(c)
            return
        }
        loop.execute { [self] in
            if let c = self.connection.withLock({ $0 }) { body(c) }
        }
    }

    public func send(text: String) { onLoop { $0.send(opcode: .text, payload: Array(text.utf8)) } }
    public func send(binary: [UInt8]) { onLoop { $0.send(opcode: .binary, payload: binary) } }
    /// Sends the text messages `next` returns, all in one write, when the socket's loop has finished the
    /// work that is ready now (`EventLoop.executeBeforeWait`): a fan-out that queued several messages for
    /// one socket in that pass pays one system call instead of one each.
    public func sendTexts(_ next: @escaping @Sendable () -> [String]) {
        loop.executeBeforeWait { [self] in
            if let c = connection.withLock({ $0 }) { c.send(texts: next()) }
        }
    }
    /// `sendTexts` for many sockets at once, from any thread: one hop to each event loop for all of its
    /// sockets, instead of one hop per socket (a fan-out from a worker thread to thousands of sockets).
    public static func sendTexts(_ batch: [(WebSocket, @Sendable () -> [String])]) {
        var byLoop: [ObjectIdentifier: (loop: EventLoop, items: [(WebSocket, @Sendable () -> [String])])] = [:]
        for item in batch { byLoop[ObjectIdentifier(item.0.loop), default: (item.0.loop, [])].items.append(item) }
        for (_, group) in byLoop {
            let items = group.items
            if group.loop.inLoop {
                for (ws, next) in items { ws.sendTexts(next) }
            } else {
                group.loop.execute { for (ws, next) in items { ws.sendTexts(next) } }
            }
        }
    }

    public func ping(_ payload: [UInt8] = []) { onLoop { $0.send(opcode: .ping, payload: payload) } }
    public func close(code: UInt16 = 1000, reason: String = "") { onLoop { $0.close(code: code, reason: reason) } }

    public static func == (a: WebSocket, b: WebSocket) -> Bool { a.id == b.id }
    public func hash(into h: inout Hasher) { h.combine(id) }
}

extension HTTPResponse {
    /// Accepts a WebSocket upgrade request (RFC 6455 section 4.2.2), or throws the error to answer instead.
    public static func webSocket(_ request: HTTPRequest, maxMessageSize: Int? = nil, callbacks: WebSocketCallbacks) throws -> HTTPResponse {
        let key: String
        do {
            key = try WebSocketHandshake.validateUpgradeRequest(request.head).key
        } catch {
            if error.status == 426 {
                throw APIError(status: 426, code: "upgrade-required", title: "Upgrade Required", detail: error.detail,
                               headers: [("Sec-WebSocket-Version", "13")])
            }
            throw APIError.badRequest(error.detail, code: "bad-websocket-handshake")
        }
        var r = HTTPResponse(status: 101)
        r.headers["Sec-WebSocket-Accept"] = WebSocketHandshake.acceptValue(forKey: key, sha1: { SHA1.hash($0) })
        r.body = .upgrade(WebSocketUpgrade(callbacks: callbacks, maxMessageSize: maxMessageSize))
        return r
    }
}
