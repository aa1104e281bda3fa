import Media
import Platform

/// Why Live refused a request. The API layer turns each case into its wire error in one place
/// (`LiveError+HTTP.swift`); store errors (`PlatformError`) pass through Live unchanged.
public enum LiveError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The media engine refused (bad SDP, unknown id, no socket).
    case media(MediaError)

    // MARK: Rooms

    /// Media before joining the conversation.
    case notJoined
    /// Mute before publishing.
    case notPublishing
    /// An answer nobody asked for.
    case noOffer
    /// A publish offer without an audio track.
    case noAudio
    /// The room already holds `capacity` members with media.
    case roomFull(capacity: Int)

    // MARK: Video sessions

    /// A request before `connect`.
    case notConnected
    /// The token could not be read or is for another session; the detail says which.
    case invalidToken(String)
    case tokenExpired
    /// No such session, or one of another project.
    case sessionNotFound
    case notAllowedToPublish(role: VideoGrant.Role)
    case notAllowedToSubscribe
    /// The media engine refused a publish offer.
    case publishFailed(MediaError)
    /// The media engine refused a subscription or its answer. Clients have always seen this as an
    /// unexplained failure (`internal-error`); the case keeps that apart from room media errors.
    case subscriptionFailed(MediaError)
    /// No such stream: of the caller's connection (`own`), or in the session.
    case streamNotFound(own: Bool)
    case connectionNotFound
    /// A signal over `VideoHub.Limits`.
    case invalidSignal
    /// A moderator-only action by someone else.
    case notModerator(ModeratedAction)
    /// An offer to publish in a relayed session, whose media goes between its clients.
    case relayedSession
    /// A relay to no subscription of the caller's (`VideoHub.relay`).
    case relayNotFound
    /// A relayed description or candidate that is not one, or is over `VideoHub.Limits`.
    case invalidRelay

    // MARK: Development

    /// `MediaBench`: an answer for a transport with no subscription waiting.
    case noPendingSubscription(TransportID)

    /// What only a moderator may do to others in a video session.
    public enum ModeratedAction: String, Sendable, Hashable {
        case forceDisconnect, forceMute
    }

    public var description: String {
        switch self {
        case .media(let e), .publishFailed(let e), .subscriptionFailed(let e): "\(e)"
        case .notJoined: "not joined"
        case .notPublishing: "not publishing"
        case .noOffer: "no offer"
        case .noAudio: "no audio"
        case .roomFull(let capacity): "room full (\(capacity))"
        case .notConnected: "not connected"
        case .invalidToken(let d): "invalid token: \(d)"
        case .tokenExpired: "token expired"
        case .sessionNotFound: "session not found"
        case .notAllowedToPublish(let role): "role \(role.rawValue) may not publish"
        case .notAllowedToSubscribe: "may not subscribe"
        case .streamNotFound(let own): own ? "no such stream of this connection" : "no such stream in this session"
        case .connectionNotFound: "no such connection"
        case .invalidSignal: "invalid signal"
        case .relayedSession: "relayed session"
        case .relayNotFound: "no such relayed subscription"
        case .invalidRelay: "invalid relay"
        case .notModerator(let action): "\(action.rawValue) needs a moderator"
        case .noPendingSubscription(let id): "no subscription waits on \(id)"
        }
    }
}
