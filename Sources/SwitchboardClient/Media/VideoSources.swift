import Foundation
import MediaLoad
import Synchronization
import Wire

/// A VP8 recording (IVF file) replayed in real time as a camera would send it, looping; a key
/// frame is sent again when the server asks (PLI/FIR).
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

    let capture: VideoCapture
    public var width: Int { capture.width }
    public var height: Int { capture.height }

    public init(path: String) throws(LoadError) {
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path) }
        do { capture = try VideoCapture(ivf: [UInt8](data)) } catch { throw .invalid(error.description) }
    }
}

/// Counts the video frames a subscription receives and the key frames among them (VP8 streams only:
/// a stream of another codec counts frames and bytes, and no key frames).
public final class VideoFrameCounter: Sendable {
    private let frameCount = Atomic<Int>(0)
    private let keyframeCount = Atomic<Int>(0)
    private let byteCount = Atomic<Int>(0)

    public init() {}

    /// Complete frames (RTP marker bit), key frames, and payload bytes.
    public var frames: Int { frameCount.load(ordering: .relaxed) }
    public var keyframes: Int { keyframeCount.load(ordering: .relaxed) }
    public var bytes: Int { byteCount.load(ordering: .relaxed) }

    func packet(payload: UnsafeRawPointer, length: Int, marker: Bool, isVP8: Bool) {
        byteCount.wrappingAdd(length, ordering: .relaxed)
        if isVP8, VP8PayloadDescriptor.startsKeyframe(payload, length: length) { keyframeCount.wrappingAdd(1, ordering: .relaxed) }
        if marker { frameCount.wrappingAdd(1, ordering: .relaxed) }
    }
}
