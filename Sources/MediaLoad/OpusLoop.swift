import Audio
import Foundation
import Synchronization

/// One second of real Opus (48 kHz mono, 20 ms frames), encoded once and sent in a loop by every
/// publisher, so a mixing server decodes real speech-sized packets rather than filler.
///
/// Two loops of the same tone: `quiet` all at -40 dBov, and `burst`, whose first 100 ms are at
/// -6 dBov. A mixed room's listeners cannot carry a publisher's send time (the mix is a new
/// packet), so their latency is the time from a burst's first packet leaving its publisher to the
/// first mixed packet whose RFC 6464 level says it is loud (`BurstClock`).
public final class OpusLoop: Sendable {
    public static let frames = 50
    public static let loudFrames = 5
    /// Mixed packets at or above this loudness (level at or below, RFC 6464: -dBov) hold a burst.
    public static let loudLevel: UInt8 = 20

    /// One encoded 20 ms frame and its RFC 6464 level (-dBov), which a browser would send beside it.
    public struct Frame: Sendable {
        public let payload: [UInt8]
        public let level: UInt8
    }

    public let quiet: [Frame]
    public let burst: [Frame]

    public init() throws {
        quiet = try OpusLoop.encode(loud: 0)
        burst = try OpusLoop.encode(loud: OpusLoop.loudFrames)
    }

    /// Mean payload of the loops, bytes.
    public var meanPayload: Double {
        Double((quiet + burst).reduce(0) { $0 + $1.payload.count }) / Double(quiet.count + burst.count)
    }

    /// 400 Hz (a whole number of cycles per second, so the loop has no seam), the first `loud`
    /// frames at -6 dBov and the rest at -40 dBov, through one encoder (browser-like settings).
    static func encode(loud: Int) throws -> [Frame] {
        let codec = try OpusCodec()
        var frame = AudioFrame(rate: .hz48000)
        var out: [Frame] = []
        var buffer = [UInt8](repeating: 0, count: OpusCodec.maxPayload)
        for k in 0..<frames {
            let amplitude = k < loud ? 16_384.0 : 328.0
            frame.withMutableSamples { s in
                for i in 0..<s.count {
                    let n = Double(k * s.count + i)
                    s[i] = Int16(amplitude * sin(2 * Double.pi * 400 * n / 48_000))
                }
            }
            let n = try buffer.withUnsafeMutableBytes { try codec.encode(frame, into: $0) }
            out.append(Frame(payload: Array(buffer[0..<n]), level: AudioLevel.level(frame)))
        }
        return out
    }
}

/// When the current burst's first packet left its publisher (monotonic ns), shared by a room's
/// bursting publisher and its listeners across the generator's loops.
public final class BurstClock: Sendable {
    let sentAt = Atomic<UInt64>(0)
    public init() {}
}
