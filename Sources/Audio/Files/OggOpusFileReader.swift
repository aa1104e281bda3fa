import COpusFile
#if canImport(Glibc)
import Glibc
#endif

/// Reads Ogg Opus files with libopusfile: mono 16-bit at 48 kHz (Opus always decodes at 48 kHz).
///
/// Read once from the start, link after link: libopusfile downmixes every link to stereo (surround by
/// its channel mapping), so a chained file whose links differ in channel count reads as one mono
/// stream; the two channels are then averaged. A link that cannot be decoded ends the read with its
/// error after the links before it.
public final class OggOpusFileReader: AudioFileReader {
    /// The most samples per channel one Opus packet decodes to (120 ms at 48 kHz).
    private static let packetSamples = 5760
    private let file: OpaquePointer
    public var sampleRate: Int { 48_000 }
    private var stereo = [Int16](repeating: 0, count: 2 * packetSamples)

    public init(path: String) throws(AudioFileError) {
        var error: Int32 = 0
        guard let of = sb_op_open_stream(path, &error) else {
            throw error == OP_EFAULT ? .open(path: path, errno: errno) : .opus(error)
        }
        file = of
    }

    deinit { op_free(file) }

    public func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioFileError) -> Int {
        guard buffer.count > 0 else { return 0 }
        let want = 2 * min(buffer.count, Self.packetSamples)
        let file = self.file
        let n = stereo.withUnsafeMutableBufferPointer { op_read_stereo(file, $0.baseAddress, Int32(want)) }
        guard n >= 0 else { throw .opus(n) }
        for i in 0..<Int(n) {
            buffer[i] = Int16((Int32(stereo[2 * i]) + Int32(stereo[2 * i + 1])) / 2)
        }
        return Int(n)
    }
}
