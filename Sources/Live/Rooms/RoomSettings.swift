import Foundation

/// Limits and tuning of audio in conversations (`rtc:*`), read from the environment:
/// `SWITCHBOARD_ROOM_CAPACITY`, `SWITCHBOARD_ROOM_LOUDEST`, `SWITCHBOARD_ROOM_FORWARD_ALL_BELOW`,
/// `SWITCHBOARD_ROOM_LEAVE_GRACE` (seconds), `SWITCHBOARD_ROOM_MODE` (`sfu`, `mixed`, `auto`),
/// `SWITCHBOARD_ROOM_MIX_ABOVE`, `SWITCHBOARD_ROOM_MIX_SPEAKERS`.
public struct RoomSettings: Sendable {
    /// Members with media (and joins through `rtc:join`) a room admits; one more gets `room-full`.
    public var capacity = 200
    /// In a room of `forwardAllBelow` or more members with media, each listener gets only the
    /// `loudest` unmuted speakers (consumers of the others are paused).
    public var loudest = 3
    public var forwardAllBelow = 10
    /// A member whose last realtime socket closed without leaving is marked left after this long
    /// (a network blip reconnects well within it).
    public var leaveGrace: Duration = .seconds(20)
    /// Peak loudness (127 + dBov) above which a member counts as speaking: -60 dBov.
    public var speakingLoudness = 67
    /// Quiet time after which `audio:speaking:off` is sent.
    public var speakingHold: Duration = .milliseconds(1200)
    /// Forwarding, mixing, or forwarding until the room has more than `mixAbove` members with media.
    public var mode: RoomMode = .auto
    public var mixAbove = 50
    /// Loudest inputs a mixed room mixes.
    public var mixSpeakers = 5

    public init() {}

    public init(environment: [String: String]) {
        self.init()
        func int(_ key: String, _ range: ClosedRange<Int>) -> Int? {
            environment[key].flatMap { Int($0) }.flatMap { range.contains($0) ? $0 : nil }
        }
        if let n = int("SWITCHBOARD_ROOM_CAPACITY", 1...100_000) { capacity = n }
        if let n = int("SWITCHBOARD_ROOM_LOUDEST", 1...100) { loudest = n }
        if let n = int("SWITCHBOARD_ROOM_FORWARD_ALL_BELOW", 0...100_000) { forwardAllBelow = n }
        if let m = environment["SWITCHBOARD_ROOM_MODE"].flatMap(RoomMode.init(rawValue:)) { mode = m }
        if let n = int("SWITCHBOARD_ROOM_MIX_ABOVE", 0...100_000) { mixAbove = n }
        if let n = int("SWITCHBOARD_ROOM_MIX_SPEAKERS", 1...64) { mixSpeakers = n }
        if let s = environment["SWITCHBOARD_ROOM_LEAVE_GRACE"].flatMap(Double.init), s >= 0, s <= 3600 {
            leaveGrace = .milliseconds(Int(s * 1000))
        }
    }
}
