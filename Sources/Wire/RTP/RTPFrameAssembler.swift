/// Rebuilds one codec's frames from a stream's RTP payloads in sequence order, starting at a key frame and
/// dropping what a loss breaks until the next one: `VP8FrameAssembler`, `H264FrameAssembler`.
public protocol RTPFrameAssembler: Sendable {
    associatedtype Frame: Sendable
    /// Whether the caller should ask the sender for a key frame (RTCP PLI or FIR).
    var needsKeyframe: Bool { get }
    /// Discards frames until the next key frame (a decoder refused one already returned).
    mutating func waitForKeyframe()
    /// Takes the next payload in sequence order (`gapBefore`: sequence numbers were skipped just before it);
    /// returns a frame when its last packet arrives.
    mutating func push(timestamp: UInt32, marker: Bool, gapBefore: Bool, payload: UnsafeRawBufferPointer) -> Frame?
}

extension VP8FrameAssembler: RTPFrameAssembler {}
extension H264FrameAssembler: RTPFrameAssembler {}
