/// A codec refused input or its C library reported a failure.
public enum CodecError: Error, Equatable, Sendable {
    /// The library could not create a state (code from the library).
    case creationFailed(code: Int32)
    /// The frame's rate is not the rate the codec runs at.
    case rateMismatch(expected: SampleRate, actual: SampleRate)
    /// A payload the decoder could not read (library code, if any).
    case invalidPayload(code: Int32)
    /// The payload decodes to a length other than one 20 ms frame.
    case wrongFrameLength(expected: Int, actual: Int)
    /// The output buffer is too small for the encoded payload.
    case outputTooSmall(needed: Int, available: Int)
    /// The encoder failed (library code).
    case encodeFailed(code: Int32)
}
