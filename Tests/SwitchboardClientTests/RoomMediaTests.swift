import Audio
@testable import API
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

            // Each side hearing the other's tone, not only the frames a sink gets before the first packets (silence,
            // then concealment): on a busy machine the media can take a few seconds to flow.
            #expect(await eventually(seconds: 15) {
                let a = aliceHears.levels[bobMedia.memberID], b = bobHears.levels[aliceMedia.memberID]
                return (a?.frames ?? 0) > 50 && (b?.frames ?? 0) > 50 && (a?.dBov ?? -127) > -20 && (b?.dBov ?? -127) > -20
            })
            _ = await eventually(seconds: 10) { await aliceMedia.statistics().receiving.packetsReceived > 50 }
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
            let file = try WAVFileReader(path: recording)
            let recorded = try file.readAll()
            #expect(file.sampleRate == 48_000 && recorded.count > 48_000)
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

    @Test("the server drops a member's socket: its media comes back by itself and both sides hear each other again")
    func mediaAfterReconnect() async throws {
        try await LiveServer.with { live in
            let room = try live.conversation("reconnect")
            var options = Session.Options()
            options.backoff = Backoff(first: .milliseconds(200), maximum: .seconds(1))
            let alice = try await Session.connect(to: live.url, token: try live.userToken("alice"), options: options)
            let bob = try await Session.connect(to: live.url, token: try live.userToken("bob"))
            let aliceHears = LevelMeter()
            let bobHears = LevelMeter()
            let aliceMedia = try await alice.enableMedia(in: room, source: ToneSource(frequency: 440), sink: aliceHears)
            let aliceStates = Collector(aliceMedia.states())
            let bobMedia = try await bob.enableMedia(in: room, source: ToneSource(frequency: 660), sink: bobHears)
            let aliceMember = aliceMedia.memberID
            func frames() -> (alice: Int, bob: Int) {
                (aliceHears.levels[bobMedia.memberID]?.frames ?? 0, bobHears.levels[aliceMember]?.frames ?? 0)
            }
            #expect(await eventually(seconds: 15) { frames().alice > 50 && frames().bob > 50 })

            // What the server does on a ping timeout: push the error, close with 4002. The server frees
            // alice's media with the socket.
            let gateway = live.server.gateway
            let socket = try #require(gateway.state.withLock { s in s.sessions[alice.sessionID ?? ""]?.socket })
            gateway.fail(socket, "session:error", rid: nil, .pingTimeout, "test")
            socket.close(code: 4002, reason: "pingTimeout")
            #expect(await aliceStates.wait { $0.contains(.reconnecting) })
            #expect(await aliceStates.wait(seconds: 15) { $0.contains(.reconnected(attempt: 1)) })
            let before = frames()
            #expect(await eventually(seconds: 15) { frames().alice > before.alice + 50 && frames().bob > before.bob + 50 },
                    "after the restart: \(frames()) against \(before)")
            #expect(aliceMedia.memberID == aliceMember, "the same member publishes again")
            #expect(abs((bobHears.levels[aliceMember]?.frequency ?? 0) - 440) < 40)
            #expect(abs((aliceHears.levels[bobMedia.memberID]?.frequency ?? 0) - 660) < 40)
            let stats = await aliceMedia.statistics()
            #expect(stats.sending?.connected == true && stats.receiving.connected)

            await aliceMedia.disable()
            #expect(await aliceStates.wait { $0.contains(.disconnected(.closed)) })
            await bobMedia.disable()
            await alice.logout()
            await bob.logout()
        }
    }

    @Test("a 16 kHz WAV file plays at 48 kHz through Audio's reader and resampler; what is not a WAV file is refused")
    func wavSource() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tone-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try WAVFileWriter(path: path, sampleRate: 16_000)
        let second = (0..<16_000).map { Int16((sin(2 * Double.pi * 500 * Double($0) / 16_000) * 10_000).rounded()) }
        try second.withUnsafeBufferPointer { (b) throws(AudioFileError) in try writer.write(b) }
        try writer.finish()

        let source = try WAVFileSource(path: path)
        var frame = AudioFrame(rate: .hz48000)
        var frames = 0
        var crossings = 0
        var previous: Int16 = 0
        while source.read(into: &frame) {
            frames += 1
            frame.withSamples { s in
                for v in s where (v < 0) != (previous < 0) { crossings += 1; previous = v }
            }
        }
        #expect((49...51).contains(frames), "one second is 50 frames of 20 ms, got \(frames)")
        #expect(abs(Double(crossings) / 2 - 500) < 15, "500 Hz keeps its pitch: \(Double(crossings) / 2) Hz")

        try Array("not a wav file at all".utf8).withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: path)) }
        #expect(throws: WAVFileSource.LoadError.self) { try WAVFileSource(path: path) }
        #expect(throws: WAVFileSource.LoadError.self) { try WAVFileSource(path: path + ".missing") }
    }
}
