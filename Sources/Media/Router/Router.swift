/// A room: the producers of its transports and who consumes them (mediasoup's Router).
///
/// Fan-out itself is a loop in `Producer.receive`; the router keeps membership and picks
/// the active speaker from RFC 6464 levels without decoding audio.
final class Router {
    let id: RouterID
    private(set) var producers: [Producer] = []
    var transports: [WebRTCTransport] = []
    private(set) var activeSpeaker: ProducerID?
    private var lastSpeakerCheck: UInt64 = 0
    /// Levels of the interval that just ended, until the worker emits them.
    private var pendingLevels: [AudioLevel]?

    func takeLevels() -> [AudioLevel]? {
        defer { pendingLevels = nil }
        return pendingLevels
    }

    /// Loudness (127 - dBov) a producer must exceed to count as speaking.
    static let speakingThreshold = 40
    static let speakerInterval: UInt64 = 300_000_000

    init(id: RouterID) { self.id = id }

    func add(_ producer: Producer) { producers.append(producer) }

    func remove(_ producer: Producer) {
        producers.removeAll { $0 === producer }
        if activeSpeaker == producer.id { activeSpeaker = nil }
    }

    func producer(_ id: ProducerID) -> Producer? { producers.first { $0.id == id } }

    /// Every `speakerInterval`: the loudest audio producer above the threshold. Returns the
    /// new speaker when it changed.
    func updateActiveSpeaker(now: UInt64) -> ProducerID?? {
        guard now &- lastSpeakerCheck >= Router.speakerInterval else { return nil }
        lastSpeakerCheck = now
        var best: (Producer, Int)?
        var levels: [AudioLevel] = []
        for producer in producers where producer.parameters.kind == .audio {
            let level = producer.takeLevel()
            let loudness = level.mean
            levels.append(AudioLevel(producer: producer.id, mean: level.mean, peak: level.peak))
            if loudness > Router.speakingThreshold, best == nil || loudness > best!.1 { best = (producer, loudness) }
        }
        pendingLevels = levels.isEmpty ? nil : levels
        let speaker = best?.0.id
        guard speaker != activeSpeaker else { return nil }
        activeSpeaker = speaker
        return .some(speaker)
    }
}
