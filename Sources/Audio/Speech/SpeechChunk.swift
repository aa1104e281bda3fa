/// A piece of synthesized speech delivered while the rest is still being made.
public struct SpeechChunk: Sendable {
    /// Whole 20 ms frames (the last chunk's final frame is padded with silence).
    public var frames: [AudioFrame]
    /// True for the final chunk of a request (its `frames` may be empty).
    public var isLast: Bool
    /// Set on the final chunk when synthesis failed part way.
    public var error: SpeechError?
}
