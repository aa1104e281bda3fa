/// An IVF file: the plain container libvpx and FFmpeg write VP8/VP9/AV1 frames into.
///
/// ```
/// file header (32 bytes, little-endian):
///   0  "DKIF"          4  version (0)      6  header length (32)
///   8  FourCC ("VP80") 12 width            14 height
///   16 time base denominator (rate)        20 time base numerator (scale)
///   24 frame count     28 unused
/// then per frame: 4 bytes frame size, 8 bytes timestamp (in time base units), the frame.
/// ```
public struct IVFFile: Sendable {
    public struct Frame: Sendable, Hashable {
        /// Presentation time in time base units.
        public var timestamp: UInt64
        /// Where the frame's bytes are in `bytes`.
        public var range: Range<Int>
    }

    public let fourCC: String
    public let width: Int
    public let height: Int
    /// Seconds per timestamp unit: numerator / denominator.
    public let timeBaseNumerator: UInt32
    public let timeBaseDenominator: UInt32
    public let frames: [Frame]
    public let bytes: [UInt8]

    public enum ParseError: Error, Equatable {
        case notIVF
        case badHeader(String)
        case truncatedFrame(index: Int)
    }

    public init(_ bytes: [UInt8]) throws(ParseError) {
        guard bytes.count >= 32, bytes[0] == 0x44, bytes[1] == 0x4B, bytes[2] == 0x49, bytes[3] == 0x46 else {
            throw .notIVF
        }
        func le(_ o: Int, _ n: Int) -> UInt64 {
            var v: UInt64 = 0
            for i in (0..<n).reversed() { v = v << 8 | UInt64(bytes[o + i]) }
            return v
        }
        let headerLength = Int(le(6, 2))
        guard headerLength >= 32, headerLength <= bytes.count else { throw .badHeader("header length \(headerLength)") }
        fourCC = String(decoding: bytes[8..<12], as: UTF8.self)
        width = Int(le(12, 2))
        height = Int(le(14, 2))
        timeBaseDenominator = UInt32(le(16, 4))
        timeBaseNumerator = UInt32(le(20, 4))
        guard timeBaseDenominator > 0, timeBaseNumerator > 0 else { throw .badHeader("time base \(timeBaseNumerator)/\(timeBaseDenominator)") }
        var frames: [Frame] = []
        var o = headerLength
        while o < bytes.count {
            guard o + 12 <= bytes.count else { throw .truncatedFrame(index: frames.count) }
            let size = Int(le(o, 4))
            let start = o + 12
            guard size <= bytes.count - start else { throw .truncatedFrame(index: frames.count) }
            frames.append(Frame(timestamp: le(o + 4, 8), range: start..<(start + size)))
            o = start + size
        }
        self.frames = frames
        self.bytes = bytes
    }

    /// A frame's presentation time in nanoseconds.
    public func nanoseconds(_ frame: Frame) -> UInt64 {
        UInt64(Double(frame.timestamp) * Double(timeBaseNumerator) / Double(timeBaseDenominator) * 1e9)
    }
}
