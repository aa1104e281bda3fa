/// How a room carries audio to its listeners.
public enum RoomMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// Forwarding: each listener receives every (or the loudest) speaker's own stream.
    case sfu
    /// One mixed Opus stream per listener, mixed on the media worker (mix-minus for speakers).
    case mixed
    /// Forwarding, switching to mixed above `RoomSettings.mixAbove` members with media.
    case auto
}
