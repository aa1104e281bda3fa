import Platform
import Wire

/// A conversation's own audio room setting, kept in its `properties` (create or update the
/// conversation to change it): `room_mode` (`sfu`, `mixed` or `auto`) and `room_mix_above` (the
/// member count above which `auto` mixes). What is absent falls back to the server's
/// `RoomSettings` (`SWITCHBOARD_ROOM_MODE`, `SWITCHBOARD_ROOM_MIX_ABOVE`).
public struct RoomModeSetting: Sendable, Hashable {
    public static let modeKey = "room_mode"
    public static let mixAboveKey = "room_mix_above"

    public var mode: RoomMode?
    public var mixAbove: Int?

    public init(mode: RoomMode? = nil, mixAbove: Int? = nil) {
        self.mode = mode
        self.mixAbove = mixAbove
    }

    /// Reads the setting from conversation properties; a value of the wrong kind or out of range
    /// is refused (`PlatformError.invalid`, a 400 in the API's error shape). JSON `null` is absent.
    public init(properties: JSONValue?) throws(PlatformError) {
        self.init()
        if let value = properties?[Self.modeKey], value != .null {
            guard let raw = value.stringValue, let mode = RoomMode(rawValue: raw) else {
                throw .invalid("properties.\(Self.modeKey) must be one of \(RoomMode.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            self.mode = mode
        }
        if let value = properties?[Self.mixAboveKey], value != .null {
            guard let n = value.intValue, (0...100_000).contains(n) else {
                throw .invalid("properties.\(Self.mixAboveKey) must be an integer from 0 to 100000.")
            }
            mixAbove = n
        }
    }

    /// The setting of a stored conversation; one stored before validation existed reads as absent.
    init(stored properties: JSONValue) {
        self = (try? RoomModeSetting(properties: properties)) ?? RoomModeSetting()
    }

    /// Whether a room with `members` members with media mixes, by this setting over `defaults`.
    public func mixes(members: Int, defaults: RoomSettings) -> Bool {
        switch mode ?? defaults.mode {
        case .sfu: false
        case .mixed: true
        case .auto: members > (mixAbove ?? defaults.mixAbove)
        }
    }
}
