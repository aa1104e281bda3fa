import Audio
import Media

/// Players and recorders of conversations whose room mixes: what the `…/say`, `…/play`,
/// `…/tone` and `…/recordings` routes and the calls' NCCO actions drive. It finds the room's mixer,
/// remembers which players run in which conversation (to stop them by kind) and otherwise leaves
/// the work to `MixerPlayers` and `Recordings`.
public actor ConversationAudio {
    public let players: MixerPlayers
    public nonisolated let recordings: Recordings
    let rooms: Rooms
    private var playing: [String: [PlayerID: PlayerKind]] = [:]

    public init(rooms: Rooms, players: MixerPlayers, recordings: Recordings) {
        self.rooms = rooms
        self.players = players
        self.recordings = recordings
    }

    /// Why a conversation's audio cannot be driven.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The room does not mix (sfu mode, or nobody with media is in it).
        case notMixing(String)
        case player(PlayerError)
        case recording(RecordingError)

        public var description: String {
            switch self {
            case .notMixing(let id): "conversation \(id) has no mix: its room is not mixing or has no members with media"
            case .player(let e): e.description
            case .recording(let e): e.description
            }
        }
    }

    public func mixer(_ conversationID: String) async throws(Failure) -> MixerID {
        guard let mixer = await rooms.mixer(conversationID: conversationID) else { throw .notMixing(conversationID) }
        return mixer.id
    }

    /// Starts a player in the conversation's mix.
    public func play(_ source: PlayerSource, conversationID: String, options: PlayerOptions = PlayerOptions(),
                     ended: @escaping @Sendable (PlayerID, PlayerEnd) -> Void = { _, _ in }) async throws(Failure) -> PlayerID {
        let mixer = try await mixer(conversationID)
        let id: PlayerID
        do {
            id = try await players.start(source, mixer: mixer, options: options) { [weak self] id, end in
                Task { await self?.forget(id, conversationID: conversationID) }
                ended(id, end)
            }
        } catch { throw .player(error) }
        playing[conversationID, default: [:]][id] = source.kind
        return id
    }

    /// Stops the conversation's players of `kind` (every kind when nil); returns how many.
    @discardableResult
    public func stop(conversationID: String, kind: PlayerKind? = nil) async -> Int {
        let ids = (playing[conversationID] ?? [:]).filter { kind == nil || $0.value == kind }.map(\.key)
        for id in ids {
            await players.stop(id)
            playing[conversationID]?[id] = nil
        }
        return ids.count
    }

    public func stop(_ id: PlayerID) async { await players.stop(id) }

    /// Players running in the conversation, by kind.
    public func players(conversationID: String) -> [PlayerID: PlayerKind] { playing[conversationID] ?? [:] }

    /// Starts recording the conversation's mix.
    public func record(conversationID: String, applicationID: String, options: RecordingOptions,
                       ended: @escaping @Sendable (RecordingInfo) -> Void = { _ in }) async throws(Failure) -> RecordingInfo {
        let mixer = try await mixer(conversationID)
        do {
            return try await recordings.start(mixer: mixer, source: conversationID, applicationID: applicationID, options: options, ended: ended)
        } catch { throw .recording(error) }
    }

    private func forget(_ id: PlayerID, conversationID: String) {
        playing[conversationID]?[id] = nil
        if playing[conversationID]?.isEmpty == true { playing[conversationID] = nil }
    }
}
