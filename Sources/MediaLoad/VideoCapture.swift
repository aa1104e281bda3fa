import Wire

/// A recorded VP8 stream for the load generator: an IVF file's frames, packetized once
/// (RFC 7741, `VP8Packetizer`) and kept in one buffer, so publishers replay real encoder
/// output (frame sizes, a key frame, packet bursts per frame) without work per send.
/// Immutable after init and shared by every publisher.
public final class VideoCapture: Sendable {
    package struct Packet: Sendable {
        package var offset: Int
        package var length: Int
    }

    package struct Frame: Sendable {
        package var firstPacket: Int
        package var packetCount: Int
        /// Presentation time from the start of the capture.
        package var time: UInt64
    }

    public let width: Int
    public let height: Int
    /// One loop of the capture: the last frame's time plus one frame interval.
    public let duration: UInt64
    package let frames: [Frame]
    package let packets: [Packet]
    package let payloads: [UInt8]

    /// Largest payload, as a 1200-byte-MTU WebRTC sender packetizes.
    public static let maxPayload = 1150

    public enum LoadError: Error, CustomStringConvertible {
        case file(IVFFile.ParseError)
        case notVP8(String)
        case empty
        case noKeyframeFirst

        public var description: String {
            switch self {
            case .file(let e): return "not a usable IVF file: \(e)"
            case .notVP8(let fourCC): return "the capture holds \(fourCC), not VP8"
            case .empty: return "the capture has no frames"
            case .noKeyframeFirst: return "the capture does not start with a key frame"
            }
        }
    }

    public init(ivf bytes: [UInt8]) throws(LoadError) {
        let file: IVFFile
        do { file = try IVFFile(bytes) } catch { throw .file(error) }
        guard file.fourCC == "VP80" else { throw .notVP8(file.fourCC) }
        guard let first = file.frames.first, !first.range.isEmpty else { throw .empty }
        guard file.bytes[first.range.lowerBound] & 0x01 == 0 else { throw .noKeyframeFirst }
        var frames: [Frame] = []
        var packets: [Packet] = []
        var payloads: [UInt8] = []
        let origin = file.nanoseconds(first)
        for frame in file.frames where !frame.range.isEmpty {
            let parts = VP8Packetizer.packetize(file.bytes[frame.range], maxPayload: Self.maxPayload)
            frames.append(Frame(firstPacket: packets.count, packetCount: parts.count, time: file.nanoseconds(frame) - origin))
            for part in parts {
                packets.append(Packet(offset: payloads.count, length: part.count))
                payloads.append(contentsOf: part)
            }
        }
        let interval = frames.count > 1 ? frames[frames.count - 1].time / UInt64(frames.count - 1) : 33_333_333
        width = file.width
        height = file.height
        duration = frames[frames.count - 1].time + interval
        self.frames = frames
        self.packets = packets
        self.payloads = payloads
    }

    /// RTP packets per second over one loop.
    public var packetsPerSecond: Double { Double(packets.count) / (Double(duration) / 1e9) }

    /// Payload bit rate over one loop, in kb/s.
    public var kilobitsPerSecond: Double { Double(payloads.count) * 8 / (Double(duration) / 1e9) / 1000 }
}
