import Testing
@testable import Live

@Suite("Audio room settings from the environment")
struct RoomSettingsTests {
    @Test("defaults: 200 members, the 3 loudest once 10 have media, 20 s to mark a vanished member left")
    func defaults() {
        let s = RoomSettings(environment: [:])
        #expect(s.capacity == 200)
        #expect(s.loudest == 3)
        #expect(s.forwardAllBelow == 10)
        #expect(s.leaveGrace == .seconds(20))
    }

    @Test("valid values are taken, out-of-range or malformed ones keep the default", arguments: [
        ("SWITCHBOARD_ROOM_CAPACITY", "2", true), ("SWITCHBOARD_ROOM_CAPACITY", "0", false),
        ("SWITCHBOARD_ROOM_CAPACITY", "lots", false), ("SWITCHBOARD_ROOM_LOUDEST", "5", true),
        ("SWITCHBOARD_ROOM_LOUDEST", "-1", false), ("SWITCHBOARD_ROOM_LEAVE_GRACE", "1.5", true),
        ("SWITCHBOARD_ROOM_LEAVE_GRACE", "-3", false),
    ])
    func parsing(key: String, value: String, taken: Bool) {
        let s = RoomSettings(environment: [key: value])
        let d = RoomSettings()
        let changed = s.capacity != d.capacity || s.loudest != d.loudest || s.leaveGrace != d.leaveGrace
        #expect(changed == taken)
    }
}
