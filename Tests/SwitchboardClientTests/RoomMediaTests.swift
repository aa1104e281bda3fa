import Audio
import Foundation
import Testing
import Wire
@testable import SwitchboardClient

@Suite("Room media against a live server", .serialized)
struct RoomMediaTests {
    @Test("two clients in a room hear each other's tones, see speaking and mute events, and record a WAV")
    func tones() async throws {
        try await LiveServer.with { live in
            let room = try live.conversation("tones")
            let alice = try await Session.connect(to: live.url, token: try live.userToken("alice"))
            let bob = try await Session.connect(to: live.url, token: try live.userToken("bob"))
            let aliceEvents = Collector(alice.events())
            let aliceHears = LevelMeter()
            let bobHears = LevelMeter()
            let recording = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-\(UUID()).wav").path
            let recorder = WAVRecorder(path: recording)
            let aliceMedia = try await alice.enableMedia(in: room, source: ToneSource(frequency: 440), sink: aliceHears)
            let bobSink = CallbackSink { frame, member in bobHears.receive(frame, from: member); recorder.receive(frame, from: member) }
            let bobMedia = try await bob.enableMedia(in: room, source: ToneSource(frequency: 660), sink: bobSink)

            #expect(await eventually(seconds: 15) {
                (aliceHears.levels[bobMedia.memberID]?.frames ?? 0) > 50 && (bobHears.levels[aliceMedia.memberID]?.frames ?? 0) > 50
            })
            let heardByAlice = try #require(aliceHears.levels[bobMedia.memberID])
            let heardByBob = try #require(bobHears.levels[aliceMedia.memberID])
            #expect(abs(heardByAlice.frequency - 660) < 40, "alice hears \(heardByAlice)")
            #expect(abs(heardByBob.frequency - 440) < 40, "bob hears \(heardByBob)")
            #expect(heardByAlice.dBov > -20)
            #expect(aliceMedia.tracks.map(\.memberID) == [bobMedia.memberID])
            #expect(await aliceEvents.wait { $0.contains { $0.kind == .speakingOn && $0.from == bobMedia.memberID } })

            try await bobMedia.setMuted(true)
            #expect(await aliceEvents.wait { $0.contains { $0.kind == .muteOn && $0.from == bobMedia.memberID } })
            #expect(await aliceEvents.wait { $0.contains { $0.kind == .speakingOff && $0.from == bobMedia.memberID } })

            try recorder.finish()
            let file = try WAVFile([UInt8](try Data(contentsOf: URL(fileURLWithPath: recording))))
            #expect(file.sampleRate == 48_000 && file.samples.count > 48_000)
            try? FileManager.default.removeItem(atPath: recording)

            let stats = await aliceMedia.statistics()
            #expect(stats.sending?.connected == true && (stats.sending?.packetsSent ?? 0) > 50)
            #expect(stats.receiving.packetsReceived > 50)
            await bobMedia.disable()
            await aliceMedia.disable()
            await alice.logout()
            await bob.logout()
        }
    }

    @Test("a WAV file round-trips through the writer and the parser, which refuses what it cannot play")
    func wav() throws {
        let file = WAVFile(sampleRate: 16_000, channels: 2, samples: [1, -1, 300, -300, .max, .min])
        let parsed = try WAVFile(file.serialize())
        #expect(parsed == file)
        #expect(parsed.mono == [1, 300, .max])
        #expect(throws: WAVFile.ParseError.notRIFFWAVE) { try WAVFile(Array("RIFF....WAVX".utf8)) }
        #expect(throws: WAVFile.ParseError.truncated(needed: 12, available: 4)) { try WAVFile(Array("RIFF".utf8)) }
        var eight = file.serialize()
        eight[34] = 8  // bits per sample
        #expect(throws: WAVFile.ParseError.self) { try WAVFile(eight) }
    }
}
