import Crypto
import Foundation
import Glibc
import Wire

public enum WebSocketClientError: Error, CustomStringConvertible, Sendable {
    case handshakeRejected(status: Int, body: String)
    case badAccept
    case headTooLarge

    public var description: String {
        switch self {
        case .handshakeRejected(let s, let b): return "the server refused the upgrade with \(s): \(b)"
        case .badAccept: return "the server's Sec-WebSocket-Accept does not match"
        case .headTooLarge: return "the server's handshake response is too large"
        }
    }
}

/// Opens ws:// and wss:// connections on our loops (RFC 6455 section 4.1).
public enum WebSocketClient {
    public static func connect(url: String, headers: HTTPHeaders = HTTPHeaders(), group: EventLoopGroup, tls: TLSContext? = nil,
                               maxMessageSize: Int = 1 << 20, timeout: Duration = .seconds(10),
                               callbacks: WebSocketCallbacks) async throws -> WebSocket {
        guard let u = URLComponents(string: url), let scheme = u.scheme?.lowercased(), scheme == "ws" || scheme == "wss",
              let host = u.host, !host.isEmpty else { throw HTTPClientError.badURL(url) }
        let secure = scheme == "wss"
        let port = UInt16(u.port ?? (secure ? 443 : 80))
        // The name's lookup counts against the whole request's deadline.
        let (addresses, timeout) = try await NameResolver.shared.addresses(of: host, port: port, within: timeout)
        var target = u.percentEncodedPath.isEmpty ? "/" : u.percentEncodedPath
        if let q = u.percentEncodedQuery { target += "?" + q }
        let key = WebSocketHandshake.clientKey(nonce: SecureRandom.bytes(16))
        var head = HTTPRequestHead(method: .GET, target: target, headers: headers)
        head.headers["Host"] = u.port.map { "\(host):\($0)" } ?? host
        head.headers["Upgrade"] = "websocket"
        head.headers["Connection"] = "Upgrade"
        head.headers["Sec-WebSocket-Key"] = key
        head.headers["Sec-WebSocket-Version"] = "13"
        var requestBytes: [UInt8] = []
        head.serialize(into: &requestBytes)
        let request = requestBytes
        let expectedAccept = WebSocketHandshake.acceptValue(forKey: key, sha1: { SHA1.hash($0) })
        let tlsContext = secure ? try (tls ?? TLSContext(clientCAFile: nil)) : nil
        let loop = group.next()
        return try await withCheckedThrowingContinuation { (cont: CheckedContinuation<WebSocket, Error>) in
            loop.execute {
                let hs = ClientHandshake(continuation: cont, request: request, expectedAccept: expectedAccept, callbacks: callbacks,
                                         maxMessage: maxMessageSize, loop: loop)
                hs.timer = loop.schedule(after: timeout) { hs.fail(HTTPClientError.timeout) }
                TCPConnector.connect(toFirstOf: addresses[...], on: loop, timeout: timeout) { result in
                    switch result {
                    case .failure(let e): hs.fail(e)
                    case .success(let (fd, address)):
                        do {
                            let stream: ByteStream = try tlsContext.map { try TLSStream(fd: fd, context: $0, serverName: host) } ?? PlainStream(fd: fd)
                            let channel = Channel(loop: loop, fd: fd, stream: stream, remote: address)
                            hs.channel = channel
                            channel.activate(handler: hs)
                        } catch {
                            Glibc.close(fd)
                            hs.fail(error)
                        }
                    }
                }
            }
        }
    }
}

/// Sends the upgrade request, checks the 101, then hands the channel to a client-role WebSocketConnection.
final class ClientHandshake: ChannelHandler, @unchecked Sendable {
    // Invariant: touched only on `loop`.
    let loop: EventLoop
    private var continuation: CheckedContinuation<WebSocket, Error>?
    private let request: [UInt8]
    private let expectedAccept: String
    private let callbacks: WebSocketCallbacks
    private let maxMessage: Int
    private var buffer: [UInt8] = []
    private var connection: WebSocketConnection?
    var channel: Channel?
    var timer: TimerHandle?

    init(continuation: CheckedContinuation<WebSocket, Error>, request: [UInt8], expectedAccept: String, callbacks: WebSocketCallbacks,
         maxMessage: Int, loop: EventLoop) {
        self.continuation = continuation
        self.request = request
        self.expectedAccept = expectedAccept
        self.callbacks = callbacks
        self.maxMessage = maxMessage
        self.loop = loop
    }

    func channelActive(_ channel: Channel) { channel.write(request) }

    func channelRead(_ channel: Channel, _ bytes: UnsafeRawBufferPointer) {
        if let connection {
            connection.receive(bytes)
            return
        }
        buffer.append(contentsOf: bytes)
        guard let end = findHeadEnd() else {
            if buffer.count > 16384 { fail(WebSocketClientError.headTooLarge) }
            return
        }
        var parser = HTTPResponseParser()
        parser.append(contentsOf: buffer[..<end])
        guard case .head(let head)? = try? parser.next() else {
            fail(HTTPClientError.malformedResponse("bad handshake response"))
            return
        }
        guard head.status == 101 else {
            fail(WebSocketClientError.handshakeRejected(status: head.status, body: String(decoding: buffer[end...], as: UTF8.self)))
            return
        }
        guard head.headers["sec-websocket-accept"] == expectedAccept else {
            fail(WebSocketClientError.badAccept)
            return
        }
        let ws = WebSocketConnection(channel: channel, role: .client, upgrade: WebSocketUpgrade(callbacks: callbacks),
                                     maxMessage: maxMessage, maxQueued: 16 << 20, metrics: Metrics())
        connection = ws
        loop.cancel(timer)
        ws.open()
        let c = continuation
        continuation = nil
        c?.resume(returning: ws.handle)
        let rest = Array(buffer[end...])
        buffer = []
        if !rest.isEmpty { rest.withUnsafeBytes { ws.receive($0) } }
    }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4) where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i + 4
        }
        return nil
    }

    func channelWritable(_ channel: Channel) { connection?.writable() }

    func channelInactive(_ channel: Channel) {
        if let connection { connection.closed() } else { fail(HTTPClientError.connectionClosed) }
    }

    func fail(_ error: Error) {
        loop.cancel(timer)
        guard let c = continuation else { return }
        continuation = nil
        if let ch = channel, ch.isOpen { ch.close() }
        c.resume(throwing: error)
    }
}
