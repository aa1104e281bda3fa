import Platform
import Testing
import Wire
@testable import Live

@Suite("A conversation's own room mode (properties.room_mode, room_mix_above)")
struct RoomModeSettingTests {
    @Test("absent or null is the server's setting; each mode and a threshold are read")
    func reading() throws {
        #expect(try RoomModeSetting(properties: nil) == RoomModeSetting())
        #expect(try RoomModeSetting(properties: .object([:])) == RoomModeSetting())
        #expect(try RoomModeSetting(properties: .object(["room_mode": .null, "ttl": .number(60)])) == RoomModeSetting())
        for mode in RoomMode.allCases {
            #expect(try RoomModeSetting(properties: .object(["room_mode": .string(mode.rawValue)])).mode == mode)
        }
        let s = try RoomModeSetting(properties: .object(["room_mode": .string("auto"), "room_mix_above": .number(4)]))
        #expect(s == RoomModeSetting(mode: .auto, mixAbove: 4))
    }

    @Test("a wrong kind or range is a 400 in the error shape, never a crash", arguments: [
        JSONValue.object(["room_mode": .string("MIXED")]), .object(["room_mode": .string("")]),
        .object(["room_mode": .number(1)]), .object(["room_mode": .bool(true)]),
        .object(["room_mix_above": .number(-1)]), .object(["room_mix_above": .number(1.5)]),
        .object(["room_mix_above": .number(100_001)]), .object(["room_mix_above": .string("50")]),
    ])
    func refused(properties: JSONValue) {
        do {
            _ = try RoomModeSetting(properties: properties)
            Issue.record("accepted \(properties)")
        } catch {
            #expect(error.status == 400 && error.code == "validation-failed")
        }
    }

    @Test("the room's own mode wins over the server's; auto mixes above its own threshold, else the server's")
    func mixes() {
        var defaults = RoomSettings()
        defaults.mode = .auto
        defaults.mixAbove = 50
        #expect(!RoomModeSetting().mixes(members: 50, defaults: defaults))
        #expect(RoomModeSetting().mixes(members: 51, defaults: defaults))
        #expect(RoomModeSetting(mode: .mixed).mixes(members: 1, defaults: defaults))
        #expect(!RoomModeSetting(mode: .sfu).mixes(members: 5_000, defaults: defaults))
        #expect(RoomModeSetting(mode: .auto, mixAbove: 2).mixes(members: 3, defaults: defaults))
        #expect(!RoomModeSetting(mode: .auto, mixAbove: 2).mixes(members: 2, defaults: defaults))
        #expect(RoomModeSetting(mixAbove: 2).mixes(members: 3, defaults: defaults), "the threshold alone, with the server's auto")
        defaults.mode = .mixed
        #expect(!RoomModeSetting(mode: .sfu).mixes(members: 3, defaults: defaults))
    }
}
