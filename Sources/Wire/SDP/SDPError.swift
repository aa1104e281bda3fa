/// Why text is not a usable session description (RFC 8866 §5).
public enum SDPError: Error, Equatable, Sendable {
    /// Larger than `SDPLimits.maxBytes`.
    case tooLarge(bytes: Int, limit: Int)
    /// More than `SDPLimits.maxLines` lines.
    case tooManyLines(limit: Int)
    /// A line longer than `SDPLimits.maxLineLength` bytes (1-based line number).
    case lineTooLong(line: Int, length: Int, limit: Int)
    /// More than `SDPLimits.maxMediaSections` `m=` sections.
    case tooManyMediaSections(limit: Int)
    /// A line that is not `<letter>=<value>`.
    case malformedLine(line: Int, text: String)
    /// The first line is not `v=`.
    case missingVersion
    /// An `m=` line without kind, port and proto, or with a bad port.
    case invalidMediaLine(line: Int, text: String)
}

/// Caps that keep parsing hostile input bounded in time and memory.
///
/// Browser offers are a few kilobytes; the defaults leave ample room for large
/// simulcast/multi-track offers while refusing megabyte-sized junk.
public struct SDPLimits: Hashable, Sendable {
    public var maxBytes: Int
    public var maxLines: Int
    public var maxLineLength: Int
    public var maxMediaSections: Int

    public init(maxBytes: Int = 256 * 1024, maxLines: Int = 8192, maxLineLength: Int = 8192, maxMediaSections: Int = 256) {
        self.maxBytes = maxBytes
        self.maxLines = maxLines
        self.maxLineLength = maxLineLength
        self.maxMediaSections = maxMediaSections
    }

    public static let `default` = SDPLimits()
}
