/// Why bytes are not a WAV file this reader plays.
public enum WAVError: Error, Equatable, Sendable {
    case notRIFF
    case notWAVE
    /// The input ended inside a header or chunk.
    case truncated(needed: Int, available: Int)
    /// A data chunk came before the fmt chunk.
    case missingFormat
    /// Not PCM (1) or extensible PCM (0xFFFE).
    case unsupportedEncoding(formatTag: UInt16)
    case unsupportedBitsPerSample(Int)
    case badFormat(String)
}
