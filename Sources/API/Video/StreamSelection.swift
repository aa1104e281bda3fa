import Live
import Media

/// A stream chosen for an archive or a broadcast in manual stream mode, with the media of it recorded.
struct ChosenStream: Codable, Sendable, Equatable {
    var streamId: String
    var hasAudio: Bool
    var hasVideo: Bool

    var json: [String: Any] { ["streamId": streamId, "hasAudio": hasAudio, "hasVideo": hasVideo] }
}

/// What of each stream an archive or a broadcast records: its kinds of media of every stream (`streamMode:
/// auto`), or of the chosen streams, as far as each was chosen with them (`manual`).
struct StreamSelection: Sendable, Equatable {
    var kinds: Set<MediaKind>
    var chosen: [ChosenStream]?

    func kinds(_ streamID: String) -> Set<MediaKind> {
        guard let chosen else { return kinds }
        guard let c = chosen.first(where: { $0.streamId == streamID }) else { return [] }
        return kinds.intersection((c.hasAudio ? [.audio] : []) + (c.hasVideo ? [.video] : []))
    }

    /// The streams a composed recording's mix hears in manual stream mode.
    var heard: Set<String> { Set((chosen ?? []).filter(\.hasAudio).map(\.streamId)) }
}

/// A change to the streams a recording in manual stream mode records: one chosen (again: with other media),
/// or one left out from now on.
enum StreamChange: Sendable {
    case add(String, hasAudio: Bool, hasVideo: Bool)
    case remove(String)

    /// Whether the change can be made: the stream to add is one of the session's (`live`), the one to remove
    /// one of `chosen`; the stream it names when not.
    func refusal(live: [String], chosen: [ChosenStream]) -> String? {
        switch self {
        case .add(let stream, _, _): live.contains(stream) ? nil : stream
        case .remove(let stream): chosen.contains { $0.streamId == stream } ? nil : stream
        }
    }

    func apply(to streams: inout [ChosenStream]) {
        switch self {
        case .add(let stream, let audio, let video):
            let chosen = ChosenStream(streamId: stream, hasAudio: audio, hasVideo: video)
            if let i = streams.firstIndex(where: { $0.streamId == stream }) { streams[i] = chosen } else { streams.append(chosen) }
        case .remove(let stream):
            streams.removeAll { $0.streamId == stream }
        }
    }
}

extension VideoHub {
    /// Makes the mix held for `holder` hear what `heard` says (nil: the recording ended), again while it changed
    /// meanwhile, so the last of several changes at once holds.
    func followMixHearing(sessionID: String, holder: String, heard: () -> Set<String>?) async throws(MediaError) {
        var applied: Set<String>?
        while let now = heard(), now != applied {
            applied = now
            try await setAudioMixHearing(sessionID: sessionID, holder: holder, streams: now)
        }
    }
}
