import CShims
import Glibc

/// What a protocol does with a channel's bytes. Called on the channel's loop.
protocol ChannelHandler: AnyObject {
    func channelActive(_ channel: Channel)
    func channelRead(_ channel: Channel, _ bytes: UnsafeRawBufferPointer)
    /// The outbound buffer drained below the low-water mark.
    func channelWritable(_ channel: Channel)
    func channelInactive(_ channel: Channel)
}

extension ChannelHandler {
    func channelActive(_ channel: Channel) {}
    func channelWritable(_ channel: Channel) {}
}

/// One connected socket on one loop: reads into the loop's scratch buffer, buffers writes, closes once.
///
/// Confined to its loop; other threads reach it only through `loop.execute`, which makes the unchecked
/// Sendable conformance sound.
final class Channel: Selectable, @unchecked Sendable {
    unowned let loop: EventLoop
    let fd: Int32
    let stream: ByteStream
    let remote: SocketAddress?
    var handler: ChannelHandler?
    private(set) var isOpen = true
    private var outbound: [UInt8] = []
    private var outboundOffset = 0
    private var closeAfterFlush = false
    /// Half-close instead of close once flushed (see `closeLingering`).
    private var lingerAfterFlush: Duration?
    private var readingPaused = false
    /// Input arrived while reading was paused, so EPOLLIN is off until reading resumes. Pausing itself
    /// changes nothing in epoll: most requests are answered before more input arrives, and this saves
    /// two epoll_ctl calls per request.
    private var inputSuppressed = false
    private var registeredEvents: UInt32 = 0

    var pendingOutboundBytes: Int { outbound.count - outboundOffset }

    init(loop: EventLoop, fd: Int32, stream: ByteStream, remote: SocketAddress?) {
        self.loop = loop
        self.fd = fd
        self.stream = stream
        self.remote = remote
    }

    /// Registers with the loop and tells the handler it is live.
    func activate(handler: ChannelHandler) {
        self.handler = handler
        registeredEvents = SB_EPOLLIN | SB_EPOLLRDHUP
        loop.register(fd: fd, events: registeredEvents, handler: self)
        handler.channelActive(self)
        // TLS client streams need to send their hello before any read event.
        if stream.wantsWritable { updateInterest() }
    }

    func handle(events: UInt32) {
        if events & SB_EPOLLOUT != 0 || stream.wantsWritable { flush() }
        guard isOpen else { return }
        if events & (SB_EPOLLIN | SB_EPOLLRDHUP | SB_EPOLLHUP | SB_EPOLLERR) != 0 && !readingPaused {
            readAvailable()
        } else if events & (SB_EPOLLHUP | SB_EPOLLERR) != 0 {
            close()
        } else if readingPaused && events & (SB_EPOLLIN | SB_EPOLLRDHUP) != 0 {
            inputSuppressed = true
            updateInterest()
        }
    }

    private func readAvailable() {
        let buf = loop.readBuffer
        // Bounded number of reads per wake-up keeps one busy socket from starving the loop.
        for _ in 0..<16 {
            guard isOpen, !readingPaused else { return }
            switch stream.read(into: buf) {
            case .bytes(let n):
                handler?.channelRead(self, UnsafeRawBufferPointer(rebasing: buf[0..<n]))
                if n < buf.count && !(stream is TLSStream) { return }
            case .wouldBlock:
                updateInterest()
                return
            case .eof:
                // A peer that half-closes after its request still gets the response already queued.
                if pendingOutboundBytes > 0 { closeWhenFlushed() } else { close() }
                return
            case .failed:
                close()
                return
            }
        }
    }

    /// Queues bytes and writes as much as the socket takes now.
    func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    func write(_ bytes: UnsafeRawBufferPointer) {
        guard isOpen, !closeAfterFlush else { return }
        if outboundOffset == outbound.count && !bytes.isEmpty {
            // Nothing queued: send straight from the caller's bytes and queue only what the socket refused.
            switch stream.write(bytes) {
            case .bytes(let n) where n == bytes.count:
                updateInterest()
                handler?.channelWritable(self)
                return
            case .bytes(let n):
                outbound.removeAll(keepingCapacity: outbound.capacity <= 65536)
                outboundOffset = 0
                outbound.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[n...]))
                updateInterest()
                return
            case .wouldBlock:
                break
            case .eof, .failed:
                close()
                return
            }
        }
        if outboundOffset == outbound.count {
            outbound.removeAll(keepingCapacity: outbound.capacity <= 65536)
            outboundOffset = 0
        }
        outbound.append(contentsOf: bytes)
        flush()
    }

    func flush() {
        guard isOpen else { return }
        while outboundOffset < outbound.count {
            let r = outbound.withUnsafeBytes { raw in
                stream.write(UnsafeRawBufferPointer(rebasing: raw[outboundOffset...]))
            }
            switch r {
            case .bytes(let n):
                outboundOffset += n
            case .wouldBlock:
                updateInterest()
                return
            case .eof, .failed:
                close()
                return
            }
        }
        if outboundOffset > 0 {
            outbound.removeAll(keepingCapacity: outbound.capacity <= 65536)
            outboundOffset = 0
        }
        if closeAfterFlush {
            if let linger = lingerAfterFlush { halfClose(linger: linger) } else { close() }
            return
        }
        updateInterest()
        handler?.channelWritable(self)
    }

    /// Stops or resumes reading (backpressure while a request is being handled).
    func setReading(_ on: Bool) {
        guard isOpen, readingPaused == on else { return }
        readingPaused = !on
        guard on else { return }
        inputSuppressed = false
        updateInterest()
        // OpenSSL may hold decrypted bytes that epoll cannot see; plain sockets are reported again by epoll.
        if stream is TLSStream { readAvailable() }
    }

    private func updateInterest() {
        guard isOpen else { return }
        var want: UInt32 = readingPaused && inputSuppressed ? 0 : (SB_EPOLLIN | SB_EPOLLRDHUP)
        if outboundOffset < outbound.count || stream.wantsWritable { want |= SB_EPOLLOUT }
        if want != registeredEvents {
            registeredEvents = want
            loop.modify(fd: fd, events: want)
        }
    }

    /// Closes after queued bytes are written.
    func closeWhenFlushed() {
        guard isOpen else { return }
        if outboundOffset == outbound.count {
            close()
        } else {
            closeAfterFlush = true
            setReading(false)
        }
    }

    /// Sends what is queued, then half-closes (FIN) and reads and discards input until the peer closes or
    /// `linger` passes. Closing with unread input would answer the peer with a reset, which can destroy what
    /// was just sent (a WebSocket close frame, an error response) before the peer reads it — the lingering
    /// close of HTTP servers. TLS streams close at once.
    func closeLingering(linger: Duration = .seconds(2)) {
        guard isOpen else { return }
        guard stream is PlainStream else { closeWhenFlushed(); return }
        if outboundOffset == outbound.count {
            halfClose(linger: linger)
        } else {
            closeAfterFlush = true
            lingerAfterFlush = linger
        }
    }

    private func halfClose(linger: Duration) {
        closeAfterFlush = false
        lingerAfterFlush = nil
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
        setReading(true)
        loop.schedule(after: linger) { [weak self] in self?.close() }
    }

    func close() {
        guard isOpen else { return }
        isOpen = false
        stream.shutdown()
        loop.unregister(fd: fd)
        Glibc.close(fd)
        outbound = []
        let h = handler
        handler = nil
        h?.channelInactive(self)
    }
}
