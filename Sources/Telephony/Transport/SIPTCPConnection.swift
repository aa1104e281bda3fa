import CShims
import Glibc
import Runtime
import Wire

/// One SIP-over-TCP or SIP-over-TLS connection (RFC 3261 §18.3, §26.2.1): Content-Length framing with
/// `SIPStreamParser`, a bounded write queue, and a non-blocking connect for connections we open.
///
/// TLS runs through Runtime's `TLSStream`: the handshake happens inside the first reads and writes, so a
/// peer that stalls it holds only its own descriptor; the endpoint closes one that has not finished it
/// within its handshake timeout.
///
/// Confined to its endpoint's loop.
final class SIPTCPConnection: Selectable {
    let fd: Int32
    let peer: SIPPeer
    unowned let loop: EventLoop
    private let stream: any ByteStream
    private let tls: TLSStream?
    private var parser: SIPStreamParser
    private var pending: [UInt8] = []
    private var connecting: Bool
    private var closed = false
    private var registered: UInt32 = 0
    private(set) var lastActivity: Instant
    /// The handshake timer of a TLS connection, cancelled when it closes.
    var handshakeTimer: TimerHandle?
    /// Closed by the handshake timer (counted as a timeout, not as a failed handshake).
    var timedOut = false
    private let onMessage: (SIPTCPConnection, SIPMessage) -> Void
    private let onClose: (SIPTCPConnection, _ failed: Bool) -> Void
    private let readBuffer: UnsafeMutableRawBufferPointer
    /// Bytes queued for a slow reader before the connection is dropped.
    static let maxPendingWrite = 1 << 20
    /// The keep-alive ping of RFC 5626 §3.5.1 (`\r\n\r\n`).
    static let ping: [UInt8] = [13, 10, 13, 10]

    /// `tls` makes this a TLS connection over `fd` (server or client side by its context).
    init(fd: Int32, peer: SIPPeer, loop: EventLoop, connecting: Bool, tls: TLSStream? = nil, limits: SIPParserLimits,
         buffer: UnsafeMutableRawBufferPointer,
         onMessage: @escaping (SIPTCPConnection, SIPMessage) -> Void, onClose: @escaping (SIPTCPConnection, Bool) -> Void) {
        self.fd = fd
        self.peer = peer
        self.loop = loop
        self.connecting = connecting
        self.tls = tls
        self.stream = tls ?? PlainStream(fd: fd)
        self.parser = SIPStreamParser(limits: limits)
        self.readBuffer = buffer
        self.onMessage = onMessage
        self.onClose = onClose
        self.lastActivity = .now()
        registered = SB_EPOLLIN | SB_EPOLLRDHUP | (connecting ? SB_EPOLLOUT : 0)
        loop.register(fd: fd, events: registered, handler: self)
    }

    var isTLS: Bool { tls != nil }
    /// True for TCP; for TLS once the handshake has finished (sticky: after a fatal error, such as a peer
    /// closing without close_notify, OpenSSL reports the session in handshake again).
    var isHandshakeComplete: Bool {
        if !handshook, tls?.isHandshakeComplete ?? true { handshook = true }
        return handshook
    }
    private var handshook = false
    var isClosed: Bool { closed }

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
        if connecting {
            guard events & (SB_EPOLLOUT | SB_EPOLLERR | SB_EPOLLHUP) != 0 else { return }
            var error: Int32 = 0
            var len = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len)
            guard error == 0 else { return close(failed: true) }
            connecting = false
        }
        // A TLS handshake moves on readable and on writable: every wake-up reads (OpenSSL says what it waits for).
        if events & SB_EPOLLIN != 0 || events & SB_EPOLLRDHUP != 0 || tls != nil { read() }
        if closed { return }
        if events & (SB_EPOLLERR | SB_EPOLLHUP) != 0 { return close(failed: true) }
        flush()
    }

    private func read() {
        while !closed {
            switch stream.read(into: readBuffer) {
            case .bytes(let n):
                lastActivity = .now()
                handshook = true
                // RFC 5626 §4.4.1 keep-alive: a double CRLF between messages is a ping, answered with one CRLF.
                if n == 4, parser.bufferedByteCount == 0, readBuffer[0..<4].elementsEqual(Self.ping) {
                    send([13, 10])
                    continue
                }
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
            case .wouldBlock:
                // Noted now: after a fatal alert or an unclean end OpenSSL reports the session in handshake again.
                _ = isHandshakeComplete
                return
            case .eof:
                return close(failed: false)
            case .failed:
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
        guard !connecting, !closed else { return }
        // A client TLS connection with nothing queued still has to send its hello.
        if pending.isEmpty, let tls, !tls.isHandshakeComplete, tls.wantsWritable { read() }
        while !closed, !pending.isEmpty {
            let r = pending.withUnsafeBytes { stream.write($0) }
            guard case .bytes(let n) = r else {
                if case .wouldBlock = r { break }
                return close(failed: true)
            }
            pending.removeFirst(n)
            lastActivity = .now()
        }
        guard !closed else { return }
        // Writable interest only while it can make progress: queued bytes on an open stream, or OpenSSL
        // waiting to write (level-triggered epoll would otherwise wake the loop in a spin mid-handshake).
        let out = stream.wantsWritable || (!pending.isEmpty && isHandshakeComplete)
        let want = SB_EPOLLIN | SB_EPOLLRDHUP | (out ? SB_EPOLLOUT : 0)
        if want != registered {
            registered = want
            loop.modify(fd: fd, events: want)
        }
    }

    func close(failed: Bool) {
        guard !closed else { return }
        closed = true
        loop.cancel(handshakeTimer)
        handshakeTimer = nil
        if tls != nil { stream.shutdown() }
        loop.unregister(fd: fd)
        Glibc.close(fd)
        onClose(self, failed)
    }
}
