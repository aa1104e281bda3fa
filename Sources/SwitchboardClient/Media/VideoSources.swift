import Foundation
import MediaLoad
import Synchronization
import Wire

/// A VP8 recording (IVF file) replayed in real time as a camera would send it, looping; a key
/// frame is sent again when the server asks (PLI/FIR). Or several recordings of one picture at different
/// sizes, sent together as a camera with simulcast sends them (RFC 8853): the server gives each subscriber
/// one size (the largest, or the smallest that meets its `setPreferredResolution`) and asks this client to
/// pause the sizes no one takes (`.unusedLayers`).
public final class IVFFileSource: Sendable {
    public enum LoadError: Error, Sendable, CustomStringConvertible {
        case unreadable(String)
        case invalid(String)
        public var description: String {
            switch self {
            case .unreadable(let path): return "cannot read \(path)"
            case .invalid(let why): return why
            }
        }
    }

    /// The sizes, smallest first: one, or each simulcast layer.
    let layers: [VideoCapture]
    /// The largest size's.
    public var width: Int { layers[layers.count - 1].width }
    public var height: Int { layers[layers.count - 1].height }
    /// The simulcast layers' RTP stream ids (RFC 8851), smallest first as the layers; empty for one size.
    public var rids: [String] { layers.count > 1 ? Array(Self.rids.prefix(layers.count)) : [] }

    /// As browsers name their three sizes: quarter, half, full.
    static let rids = ["q", "h", "f"]

    public init(path: String) throws(LoadError) {
        layers = [try Self.load(path)]
    }

    /// Simulcast: two or three recordings of the same picture at different sizes (in any order; they are sent
    /// smallest first, as `rids` names them).
    public init(simulcast paths: [String]) throws(LoadError) {
        guard (2...Self.rids.count).contains(paths.count) else { throw .invalid("simulcast takes 2 or 3 recordings, not \(paths.count)") }
        var loaded: [VideoCapture] = []
        for path in paths { loaded.append(try Self.load(path)) }
        layers = loaded.sorted { $0.width * $0.height < $1.width * $1.height }
        for (a, b) in zip(layers, layers.dropFirst()) where a.width * a.height == b.width * b.height {
            throw .invalid("simulcast recordings must differ in size (two are \(b.width)x\(b.height))")
        }
    }

    private static func load(_ path: String) throws(LoadError) -> VideoCapture {
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path) }
        do { return try VideoCapture(ivf: [UInt8](data)) } catch { throw .invalid("\(path): \(error.description)") }
    }
}

/// Counts the video frames a subscription receives and the key frames among them (VP8 streams only:
/// a stream of another codec counts frames and bytes, and no key frames).
public final class VideoFrameCounter: Sendable {
    private let frameCount = Atomic<Int>(0)
    private let keyframeCount = Atomic<Int>(0)
    private let byteCount = Atomic<Int>(0)
    private let size = Atomic<Int>(0)

    public init() {}

    /// Complete frames (RTP marker bit), key frames, and payload bytes.
    public var frames: Int { frameCount.load(ordering: .relaxed) }
    public var keyframes: Int { keyframeCount.load(ordering: .relaxed) }
    public var bytes: Int { byteCount.load(ordering: .relaxed) }
    /// The picture size the last key frame declared (VP8; 0 × 0 before one): which size of a simulcast stream
    /// the server sends this subscription.
    public var width: Int { size.load(ordering: .relaxed) >> 16 }
    public var height: Int { size.load(ordering: .relaxed) & 0xFFFF }

    func packet(payload: UnsafeRawPointer, length: Int, marker: Bool, isVP8: Bool) {
        byteCount.wrappingAdd(length, ordering: .relaxed)
        if isVP8, VP8PayloadDescriptor.startsKeyframe(payload, length: length) {
            keyframeCount.wrappingAdd(1, ordering: .relaxed)
            if let declared = VP8PayloadDescriptor.keyframeSize(payload, length: length) {
                size.store(declared.width << 16 | declared.height, ordering: .relaxed)
            }
        }
        if marker { frameCount.wrappingAdd(1, ordering: .relaxed) }
    }
}
