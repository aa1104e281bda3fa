/// Counters of one mixer.
public struct MixerStats: Sendable, Hashable, Codable {
    public var participants = 0
    public var inputs = 0
    /// Consumers of the mix (listeners with a subscribe transport).
    public var outputs = 0
    /// Ticks that mixed something, and ticks skipped because no input had audio.
    public var ticksMixed: UInt64 = 0
    public var ticksIdle: UInt64 = 0
    /// Opus encodes of the shared mix and of own mixes (mix-minus, restricted) since creation.
    public var sharedEncodes: UInt64 = 0
    public var ownEncodes: UInt64 = 0
    public var packetsSent: UInt64 = 0
    /// Input frames consumed undecoded: in a mixer of more inputs than it decodes, those whose senders'
    /// levels (RFC 6464) ranked them below the loudest.
    public var framesSkipped: UInt64 = 0
    /// Participants holding an Opus encoder of their own (speakers, restricted listeners; plain
    /// listeners share the one mix and have none), and encoders the tick had to make itself.
    public var encoders = 0
    public var encodersMadeOnTick: UInt64 = 0
    /// Percent of packets the shared mix's encoder plans its FEC for, from its listeners' RTCP reports.
    public var sharedExpectedLossPercent: Int32 = 0
    /// The rate it mixes at now (8,000 when only G.711 phones take part, else 48,000), and how many times
    /// that changed.
    public var sampleRate = 48_000
    public var rateChanges: UInt64 = 0
    /// Participants currently speaking, by the decoded signal.
    public var speaking: [MixerParticipantID] = []
    public init() {}
}
