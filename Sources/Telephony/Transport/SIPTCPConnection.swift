import CShims
import Glibc
import Runtime
import Wire

/// One SIP-over-TCP connection (RFC 3261 §18.3): Content-Length framing with `SIPStreamParser`,
/// a bounded write queue, and a non-blocking connect for connections we open.
///
/// Confined to its endpoint's loop.
final class SIPTCPConnection: Selectable {
    let fd: Int32
    let peer: SIPPeer
    unowned let loop: EventLoop
    private var parser: SIPStreamParser
    private var pending: [UInt8] = []
    private var connecting: Bool
    private var closed = false
    private(set) var lastActivity: Instant
    private let onMessage: (SIPTCPConnection, SIPMessage) -> Void
    private let onClose: (SIPTCPConnection, _ failed: Bool) -> Void
    private let readBuffer: UnsafeMutableRawBufferPointer
    /// Bytes queued for a slow reader before the connection is dropped.
    static let maxPendingWrite = 1 << 20

    init(fd: Int32, peer: SIPPeer, loop: EventLoop, connecting: Bool, limits: SIPParserLimits, buffer: UnsafeMutableRawBufferPointer,
         onMessage: @escaping (SIPTCPConnection, SIPMessage) -> Void, onClose: @escaping (SIPTCPConnection, Bool) -> Void) {
        self.fd = fd
        self.peer = peer
        self.loop = loop
        self.connecting = connecting
        self.parser = SIPStreamParser(limits: limits)
        self.readBuffer = buffer
        self.onMessage = onMessage
        self.onClose = onClose
        self.lastActivity = .now()
        loop.register(fd: fd, events: SB_EPOLLIN | SB_EPOLLRDHUP | (connecting ? SB_EPOLLOUT : 0), handler: self)
    }

    /// Opens a non-blocking connection to `peer` (numeric IPv4 or IPv6); nil when the address is not numeric.
    static func connect(to peer: SIPPeer) -> Int32? {
        guard let family = IPEndpoint.family(of: peer.host), let address = IPEndpoint(host: peer.host, port: peer.port) else { return nil }
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | SB_SOCK_NONBLOCK | SB_SOCK_CLOEXEC, 0)
        guard fd >= 0 else { return nil }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let rc = address.withSockAddr { Glibc.connect(fd, $0, $1) }
        guard rc == 0 || errno == EINPROGRESS else { Glibc.close(fd); return nil }
        return fd
    }

    func handle(events: UInt32) {
        if closed { return }
        if connecting, events & (SB_EPOLLOUT | SB_EPOLLERR | SB_EPOLLHUP) != 0 {
            var error: Int32 = 0
            var len = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len)
            guard error == 0 else { return close(failed: true) }
            connecting = false
        }
        if events & SB_EPOLLIN != 0 || events & SB_EPOLLRDHUP != 0 { read() }
        if closed { return }
        if events & (SB_EPOLLERR | SB_EPOLLHUP) != 0 { return close(failed: true) }
        flush()
    }

    private func read() {
        while !closed {
            let n = Glibc.read(fd, readBuffer.baseAddress, readBuffer.count)
            if n > 0 {
                lastActivity = .now()
                parser.append(contentsOf: UnsafeRawBufferPointer(rebasing: readBuffer[0..<n]))
                do {
                    while let message = try parser.next() {
                        onMessage(self, message)
                        if closed { return }
                    }
                } catch {
                    // A framing error leaves no way to find the next message: answer nothing, drop the stream.
                    return close(failed: false)
                }
            } else if n == 0 {
                return close(failed: false)
            } else {
                if errno == EAGAIN || errno == EWOULDBLOCK { return }
                if errno == EINTR { continue }
                return close(failed: true)
            }
        }
    }

    /// Queues `bytes`; false when the connection is closed or its queue is full (it is then closed).
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        guard !closed else { return false }
        guard pending.count + bytes.count <= Self.maxPendingWrite else { close(failed: true); return false }
        pending.append(contentsOf: bytes)
        if !connecting { flush() }
        return !closed
    }

    private func flush() {
        guard !connecting, !pending.isEmpty else { return }
        let n = pending.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if n > 0 {
            pending.removeFirst(n)
            lastActivity = .now()
        } else if n < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
            return close(failed: true)
        }
        loop.modify(fd: fd, events: SB_EPOLLIN | SB_EPOLLRDHUP | (pending.isEmpty ? 0 : SB_EPOLLOUT))
    }

    func close(failed: Bool) {
        guard !closed else { return }
        closed = true
        loop.unregister(fd: fd)
        Glibc.close(fd)
        onClose(self, failed)
    }
}
