/// Counters and current delays of one jitter buffer.
public struct JitterStatistics: Equatable, Sendable {
    public var received = 0
    public var played = 0
    public var concealed = 0
    public var late = 0
    public var duplicates = 0
    public var tooLarge = 0
    /// Packets dropped because they fell out of the window (a burst longer than the capacity).
    public var overflowDrops = 0
    /// Packets skipped to bring a grown delay back down.
    public var shrinkDrops = 0
    public var restarts = 0
    /// Times playout ran dry and went back to buffering.
    public var underruns = 0
    /// The delay the buffer aims for, in milliseconds (between the configured minimum and maximum).
    public var targetDelayMilliseconds = 0
    /// Audio buffered ahead of playout, in milliseconds.
    public var bufferedMilliseconds = 0
    /// RFC 3550 §6.4.1 interarrival jitter, in milliseconds.
    public var jitterMilliseconds = 0.0

    public init() {}
}
