import CShims
import Glibc

/// The outcome of one non-blocking read or write. `package`: the SIP transport reads and writes its
/// TCP and TLS connections through the same streams as HTTP.
package enum IOResult {
    case bytes(Int)
    case wouldBlock
    case eof
    case failed(Int32)
}

/// A byte stream over a non-blocking socket: plain TCP or TLS.
package protocol ByteStream: AnyObject {
    func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult
    func write(_ bytes: UnsafeRawBufferPointer) -> IOResult
    /// True while a TLS handshake or renegotiation needs the socket writable to make progress.
    var wantsWritable: Bool { get }
    func shutdown()
}

package final class PlainStream: ByteStream {
    package let fd: Int32
    package init(fd: Int32) { self.fd = fd }

    package func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
        if n > 0 { return .bytes(n) }
        if n == 0 { return .eof }
        let e = errno
        return e == EAGAIN || e == EWOULDBLOCK || e == EINTR ? .wouldBlock : .failed(e)
    }

    package func write(_ bytes: UnsafeRawBufferPointer) -> IOResult {
        let n = send(fd, bytes.baseAddress, bytes.count, SB_MSG_NOSIGNAL)
        if n >= 0 { return .bytes(n) }
        let e = errno
        return e == EAGAIN || e == EWOULDBLOCK || e == EINTR ? .wouldBlock : .failed(e)
    }

    package var wantsWritable: Bool { false }
    package func shutdown() { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }
}
