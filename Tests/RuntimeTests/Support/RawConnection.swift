import Glibc
import Runtime
import Wire

/// A plain TCP client for live tests that says exactly what the test writes, byte for byte.
///
/// Reads poll a non-blocking socket and sleep between attempts, so a waiting test never holds a thread of the
/// cooperative pool the server's handlers run on.
final class RawConnection {
    let fd: Int32
    private var responses = HTTPResponseParser(limits: HTTPParserLimits(maxBody: 1 << 30))
    private var frames = WebSocketFrameParser(role: .client)
    /// Bytes read but not yet consumed by `readResponse` or `readFrame`.
    private var pending: [UInt8] = []
    private(set) var sawEOF = false

    /// Connects to 127.0.0.1:`port`; `receiveBuffer` shrinks SO_RCVBUF to model a peer that reads slowly.
    init(port: UInt16, receiveBuffer: Int32? = nil) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError.system("socket", errno) }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            let e = errno
            close(fd)
            throw SocketError.system("connect", e)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        self.fd = fd
    }

    deinit { close(fd) }

    /// True when a connect to `port` is refused right now.
    static func isRefused(port: UInt16) -> Bool {
        do {
            _ = try RawConnection(port: port)
            return false
        } catch SocketError.system(_, let e) {
            return e == ECONNREFUSED
        } catch {
            return false
        }
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        var spins = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 { offset += n; continue }
            if n < 0 && (errno == EAGAIN || errno == EINTR) && spins < 2000 {
                spins += 1
                usleep(1000)
                continue
            }
            throw SocketError.system("send", errno)
        }
    }

    /// Reads whatever arrives next (at least one byte), or returns false on EOF or timeout.
    @discardableResult
    func fill(timeout: Duration = .seconds(30)) async -> Bool {
        if sawEOF { return false }
        let deadline = ContinuousClock.now + timeout
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                pending.append(contentsOf: buf[0..<n])
                return true
            }
            if n == 0 || (errno != EAGAIN && errno != EINTR) {
                sawEOF = true
                return false
            }
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Reads everything until the peer closes; returns the bytes not yet consumed.
    func readToEOF(timeout: Duration = .seconds(30)) async -> [UInt8] {
        let deadline = ContinuousClock.now + timeout
        while !sawEOF && ContinuousClock.now < deadline { await fill(timeout: deadline - ContinuousClock.now) }
        defer { pending = [] }
        return pending
    }

    /// Reads until `count` bytes are pending or the peer closes; returns and consumes them.
    func read(exactly count: Int, timeout: Duration = .seconds(30)) async -> [UInt8] {
        let deadline = ContinuousClock.now + timeout
        while pending.count < count && ContinuousClock.now < deadline {
            if !(await fill(timeout: deadline - ContinuousClock.now)) { break }
        }
        let n = min(count, pending.count)
        defer { pending.removeFirst(n) }
        return Array(pending[0..<n])
    }

    /// True once the peer has closed its side (checked within `timeout`).
    func isClosedByPeer(timeout: Duration = .seconds(30)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !sawEOF && ContinuousClock.now < deadline { await fill(timeout: deadline - ContinuousClock.now) }
        return sawEOF
    }

    /// Reads one complete response (1xx heads are returned on their own) for a request of `method`.
    func readResponse(for method: HTTPMethod = .GET, timeout: Duration = .seconds(30)) async throws -> LiveResponse {
        responses.requestMethod = method
        let deadline = ContinuousClock.now + timeout
        var head: HTTPResponseHead?
        var body: [UInt8] = []
        while true {
            if !pending.isEmpty {
                responses.append(contentsOf: pending)
                pending = []
            }
            while let event = try responses.next() ?? (sawEOF ? responses.finish() : nil) {
                switch event {
                case .head(let h):
                    if h.status < 200 { return LiveResponse(head: h, body: []) }
                    head = h
                case .body(let b): body += b
                case .end:
                    if let head { return LiveResponse(head: head, body: body) }
                }
            }
            if sawEOF || ContinuousClock.now >= deadline { throw LiveTestError.noResponse(partial: head?.status) }
            await fill(timeout: deadline - ContinuousClock.now)
        }
    }

    // MARK: WebSocket

    /// Performs a client upgrade on `path` and checks the 101.
    func upgrade(path: String) async throws {
        try send("GET \(path) HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        let r = try await readResponse()
        guard r.status == 101 else { throw LiveTestError.unexpectedStatus(r.status) }
        adoptLeftover()
    }

    /// After a 101, hands bytes the response parser holds back to the frame reader.
    func adoptLeftover() { pending = responses.takeBufferedBytes() + pending }

    func sendFrame(_ frame: WebSocketFrame, mask: UInt32? = 0x1234_5678) throws {
        try send(frame.serialized(maskingKey: mask))
    }

    /// Reads the next frame the server sends, or nil when the connection ends first.
    func readFrame(timeout: Duration = .seconds(30)) async throws -> WebSocketFrame? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if !pending.isEmpty {
                frames.append(contentsOf: pending)
                pending = []
            }
            if let f = try frames.next() { return f }
            if sawEOF || ContinuousClock.now >= deadline { return nil }
            await fill(timeout: deadline - ContinuousClock.now)
        }
    }
}

struct LiveResponse {
    var head: HTTPResponseHead
    var body: [UInt8]
    var status: Int { head.status }
    var text: String { String(decoding: body, as: UTF8.self) }
    func header(_ name: String) -> String? { head.headers[name] }
}

enum LiveTestError: Error {
    case noResponse(partial: Int?)
    case unexpectedStatus(Int)
    case timeout(String)
}

/// The close code carried by a close frame's payload (RFC 6455 section 5.5.1).
func closeCode(of frame: WebSocketFrame?) -> UInt16? {
    guard let frame, frame.opcode == .close, frame.payload.count >= 2 else { return nil }
    return UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1])
}
