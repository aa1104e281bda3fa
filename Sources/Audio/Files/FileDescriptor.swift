#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file opened for the readers and writers: plain POSIX reads and writes, closed on deinit.
final class FileDescriptor {
    let fd: Int32

    init(reading path: String) throws(AudioFileError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .open(path: path, errno: errno) }
        self.fd = fd
    }

    init(writing path: String) throws(AudioFileError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .open(path: path, errno: errno) }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Reads up to `buffer.count` bytes; 0 at the end of the file.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(AudioFileError) -> Int {
        while true {
            let n = systemRead(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno != EINTR { throw .read(errno: errno) }
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(AudioFileError) {
        var done = 0
        while done < bytes.count {
            let n = systemWrite(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw .write(errno: errno)
            }
            done += n
        }
    }

    func write(_ bytes: [UInt8]) throws(AudioFileError) {
        try bytes.withUnsafeBufferPointer { (b) throws(AudioFileError) in try write(UnsafeRawBufferPointer(b)) }
    }

    /// Writes `bytes` at `offset` without moving the file position.
    func write(_ bytes: [UInt8], at offset: Int) throws(AudioFileError) {
        let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
        guard n == bytes.count else { throw .write(errno: errno) }
    }
}

private func systemRead(_ fd: Int32, _ p: UnsafeMutableRawPointer?, _ n: Int) -> Int { read(fd, p, n) }
private func systemWrite(_ fd: Int32, _ p: UnsafeRawPointer?, _ n: Int) -> Int { write(fd, p, n) }
