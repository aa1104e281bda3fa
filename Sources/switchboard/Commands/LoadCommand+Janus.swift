import Crypto
import Foundation
import Media
import MediaLoad
import Runtime

/// `switchboard load --janus URL --mode mixed [--legs]`: the mixed-room load of `load --mode mixed`
/// through Janus's AudioBridge, for `scripts/bench-peers`. The same generator peers and Opus loop;
/// each peer is one AudioBridge participant (one send-receive peer connection, the plugin's own mix
/// for it): speakers join unmuted, listeners muted, and with `--legs`
/// every publisher speaks and listens. A muted listener sends nothing (the plugin has no packet of
/// its to receive), as Switchboard's receive-only listeners. Latency is measured per burst, as for
/// Switchboard's mixes.
extension PeerBench {
    static func audioBridge(url: String, args: Arguments, rooms: Int, publishers: Int, subscribers: Int, legs: Bool, warmup: Int,
                            duration: Int, threads: Int, profile: SRTPProfile, http: HTTPClient) async throws -> Int32 {
        guard let host = URLComponents(string: url)?.host else { throw CLIError("--janus: expected http://HOST:PORT/janus") }
        let generator = try LoadGenerator(threads: threads, bindHost: args["--bind"] ?? host, srtpProfiles: [profile], pollingReceivers: args.flag("--poll-receivers"))
        defer { generator.shutdown() }
        let session = JanusSession(url: url, http: http)
        try await session.start()
        let bridge = JanusAudioBridge(session: session)
        do {
            let code = try await mixedRooms(
                bridge: bridge, generator: generator, rooms: rooms, publishers: publishers, listeners: legs ? 0 : subscribers, legs: legs,
                warmup: warmup, duration: duration, serverPID: args["--server-pid"].flatMap { Int32($0) }, json: args.flag("--json"))
            await session.close()
            return code
        } catch {
            let hangups = await session.hangups
            await session.close()
            if hangups.isEmpty { throw error }
            throw CLIError("\(error); Janus: \(hangups.prefix(3).joined(separator: "; "))")
        }
    }

    private static func mixedRooms(bridge: JanusAudioBridge, generator: LoadGenerator, rooms: Int, publishers: Int, listeners: Int, legs: Bool,
                                   warmup: Int, duration: Int, serverPID: Int32?, json: Bool) async throws -> Int32 {
        let opus = try OpusLoop()
        let clocks = (0..<rooms).map { _ in BurstClock() }
        let firstRoom = UInt64.random(in: 1_000_000...1_000_000_000)
        let session = bridge.session
        /// One participant: attach, join with the offer, the answer applied, the host candidate trickled.
        func join(room: Int, muted: Bool, hears: Bool, bursting: Bool) async throws {
            let (peer, offer) = try await generator.makeParticipant(
                opus: muted ? nil : opus, burst: hears || bursting ? clocks[room] : nil, bursting: bursting)
            let handle = try await session.attach(JanusAudioBridge.plugin)
            let answer = try await bridge.join(handle, room: firstRoom + UInt64(room), muted: muted, offer: offer)
            try await generator.completePublisher(peer, answer: answer)
            try await session.trickle(handle, candidate: try await generator.hostCandidate(peer))
            // The end of candidates once connected (Janus in ICE-lite mode fails a component whose
            // candidates are complete before any check arrived).
            Task {
                for _ in 0..<2000 where !(await generator.isConnected(peer)) { try? await Task.sleep(for: .milliseconds(5)) }
                try? await session.trickle(handle, candidate: nil)
            }
        }
        for room in 0..<rooms {
            try await bridge.createRoom(firstRoom + UInt64(room))
            // Without --legs a speaker still gets its mix from AudioBridge, but does not measure it:
            // latency is the listeners', as for Switchboard's send-only publishers.
            for p in 0..<publishers { try await join(room: room, muted: false, hears: legs, bursting: p == 0) }
        }
        try await LoadCommand.waitConnected(generator, expected: rooms * publishers)
        for room in 0..<rooms {
            for _ in 0..<listeners { try await join(room: room, muted: true, hears: true, bursting: false) }
        }
        try await LoadCommand.waitConnected(generator, expected: rooms * (publishers + listeners))
        try await Task.sleep(for: .seconds(warmup))

        let cpuBefore = LoadCommand.CPUSample(serverPID: serverPID)
        let started = Date()
        await generator.startMeasuring()
        try await Task.sleep(for: .seconds(duration))
        let elapsed = Date().timeIntervalSince(started)
        let report = await generator.stopMeasuring(seconds: elapsed)
        let cpuAfter = LoadCommand.CPUSample(serverPID: serverPID)

        let hearing = rooms * (legs ? publishers : listeners)
        var result: [String: Any] = [
            "server": "janus", "mode": "mixed", "legs": legs, "opus_mean_payload_bytes": (opus.meanPayload * 10).rounded() / 10,
            "rooms": rooms, "publishers_per_room": publishers, "subscribers_per_room": legs ? publishers : listeners,
            "consumers": hearing, "seconds": (elapsed * 100).rounded() / 100,
            "sent_packets_per_s": Int(Double(report.publishersSent) / elapsed),
            "received_packets_per_s": Int(Double(report.subscribersReceived) / elapsed),
            "loss_percent": (report.lossFraction * 10_000).rounded() / 100,
            "latency_ms_p50": report.latency.percentile(0.50), "latency_ms_p99": report.latency.percentile(0.99),
            "latency_ms_p999": report.latency.percentile(0.999),
        ]
        cpuAfter.record(since: cpuBefore, into: &result)
        try print(result, json: json)
        return report.subscribersReceived > 0 ? 0 : 1
    }
}
