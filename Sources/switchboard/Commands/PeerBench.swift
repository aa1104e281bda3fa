import Foundation
import Media
import MediaLoad
import Runtime

/// `switchboard load --janus URL` (the SFU load against Janus's VideoRoom) and `switchboard load --joins N`
/// (join time, against Switchboard's `--server` or Janus): the same generator peers as `load`, signalled
/// through either server's API, measured the same way, for `scripts/bench-peers`.
enum PeerBench {
    static let known: Set<String> = [
        "--server", "--janus", "--rooms", "--publishers", "--subscribers", "--duration", "--warmup", "--threads", "--server-pid",
        "--json", "--video", "--video-kbps", "--srtp", "--timeout", "--joins", "--bind", "--mode", "--legs", "--poll-receivers",
    ]

    static func run(_ args: Arguments) async throws -> Int32 {
        try args.check(known: known)
        func int(_ name: String, _ fallback: Int) throws -> Int {
            guard let v = args[name] else { return fallback }
            guard let n = Int(v), n >= 0 else { throw CLIError("\(name): expected a number") }
            return n
        }
        let rooms = max(1, try int("--rooms", 1))
        let publishers = max(1, try int("--publishers", 1))
        let subscribers = try int("--subscribers", 10)
        let duration = try int("--duration", 10)
        let warmup = try int("--warmup", 2)
        let joins = try int("--joins", 0)
        let threads = max(1, try int("--threads", 1))
        let videoKbps = try int("--video-kbps", 880)
        let video = args.flag("--video") || args["--video-kbps"] != nil
        let limit = try int("--timeout", 120 + warmup + duration + rooms * (publishers + subscribers) / 20 + joins)
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: TimeInterval(limit))
            FileHandle.standardError.write(Data("load: no result within \(limit) s (--timeout)\n".utf8))
            exit(3)
        }

        let group = EventLoopGroup(threads: 1, name: "load-http")
        defer { group.shutdownAndWait() }
        let http = HTTPClient(group: group)
        let profile = try LoadCommand.srtpProfile(args)
        let mode = args["--mode"] ?? "sfu"
        guard mode == "sfu" || mode == "mixed" else { throw CLIError("--mode: expected sfu or mixed") }
        if args.flag("--legs") && mode != "mixed" { throw CLIError("--legs: only with --mode mixed") }
        if mode == "mixed" {
            guard let url = args["--janus"], joins == 0 else { throw CLIError("--mode mixed: with --janus (AudioBridge), not --joins") }
            return try await audioBridge(url: url, args: args, rooms: rooms, publishers: publishers, subscribers: subscribers,
                                         legs: args.flag("--legs"), warmup: warmup, duration: duration, threads: threads, profile: profile, http: http)
        }
        let signalling: any RoomSignalling
        let generator: LoadGenerator
        if let url = args["--janus"] {
            // Janus carries no media on 127.x: the peers bind --bind, or the address Janus's API is on.
            guard let host = URLComponents(string: url)?.host else { throw CLIError("--janus: expected http://HOST:PORT/janus") }
            generator = try LoadGenerator(threads: threads, bindHost: args["--bind"] ?? host, srtpProfiles: [profile], pollingReceivers: args.flag("--poll-receivers"))
            let session = JanusSession(url: url, http: http)
            try await session.start()
            signalling = JanusSignalling(room: JanusVideoRoom(session: session), generator: generator)
        } else {
            let base = try args.require("--server").trimmingCharacters(in: CharacterSet(charactersIn: "/"))
            generator = try LoadGenerator(threads: threads, srtpProfiles: [profile], pollingReceivers: args.flag("--poll-receivers"))
            signalling = SwitchboardSignalling(base: base, http: http)
        }
        defer { generator.shutdown() }
        let code: Int32
        do {
            if joins > 0 {
                code = try await joinTimes(joins, video: video, videoKbps: videoKbps, generator: generator, signalling: signalling, json: args.flag("--json"))
            } else {
                code = try await forwarding(
                    rooms: rooms, publishers: publishers, subscribers: subscribers, video: video, videoKbps: videoKbps,
                    warmup: warmup, duration: duration, serverPID: args["--server-pid"].flatMap { Int32($0) },
                    generator: generator, signalling: signalling, json: args.flag("--json"))
            }
        } catch {
            await signalling.close()
            throw error
        }
        await signalling.close()
        return code
    }

    // MARK: SFU forwarding

    /// P publishers and S subscribers per room, then a measured window: the same figures as `load`,
    /// from the generator's side (what subscribers received) so both servers are counted alike.
    static func forwarding(rooms: Int, publishers: Int, subscribers: Int, video: Bool, videoKbps: Int, warmup: Int, duration: Int,
                           serverPID: Int32?, generator: LoadGenerator, signalling: any RoomSignalling, json: Bool) async throws -> Int32 {
        for room in 0..<rooms {
            try await signalling.prepare(room: room, publishers: publishers)
            for _ in 0..<publishers {
                let (peer, offer) = try await generator.makePublisher(video: video, videoKbps: videoKbps)
                let answer = try await signalling.publish(room: room, offer: offer, peer: peer)
                try await generator.completePublisher(peer, answer: answer)
            }
        }
        try await LoadCommand.waitConnected(generator, expected: rooms * publishers)
        for room in 0..<rooms {
            for _ in 0..<subscribers {
                let (offer, token) = try await signalling.subscribe(room: room)
                let (peer, answer) = try await generator.makeSubscriber(offer: offer)
                try await signalling.answer(token: token, sdp: answer, peer: peer)
            }
        }
        try await LoadCommand.waitConnected(generator, expected: rooms * (publishers + subscribers))
        try await Task.sleep(for: .seconds(warmup))

        let cpuBefore = LoadCommand.CPUSample(serverPID: serverPID)
        let started = Date()
        await generator.startMeasuring()
        try await Task.sleep(for: .seconds(duration))
        let elapsed = Date().timeIntervalSince(started)
        let report = await generator.stopMeasuring(seconds: elapsed)
        let cpuAfter = LoadCommand.CPUSample(serverPID: serverPID)

        let received = Double(report.subscribersReceived) / elapsed
        var result: [String: Any] = [
            "server": signalling.name, "rooms": rooms, "publishers_per_room": publishers, "subscribers_per_room": subscribers,
            "video": video, "consumers": rooms * publishers * subscribers * (video ? 2 : 1), "seconds": (elapsed * 100).rounded() / 100,
            "sent_packets_per_s": Int(Double(report.publishersSent) / elapsed), "received_packets_per_s": Int(received),
            "loss_percent": (report.lossFraction * 10_000).rounded() / 100,
            "latency_ms_p50": report.latency.percentile(0.50), "latency_ms_p99": report.latency.percentile(0.99),
            "latency_ms_p999": report.latency.percentile(0.999),
        ]
        if let cores = cpuAfter.record(since: cpuBefore, into: &result), cores > 0 {
            result["received_packets_per_s_per_core"] = Int(received / cores)
        }
        try print(result, json: json)
        return report.subscribersReceived > 0 ? 0 : 1
    }

    // MARK: Join time

    /// N times, each in a new room: a publisher joins (signalling, ICE, DTLS), then a subscriber joins as
    /// soon as the publisher is connected (as a client told of a new publisher would); the join time
    /// runs from the publisher's first request to its first packet reaching the subscriber.
    static func joinTimes(_ count: Int, video: Bool, videoKbps: Int, generator: LoadGenerator, signalling: any RoomSignalling,
                          json: Bool) async throws -> Int32 {
        var totals: [Double] = []
        var publishing: [Double] = []
        var subscribing: [Double] = []
        for room in 0..<count {
            try await signalling.prepare(room: room, publishers: 1)
            let start = LoadGenerator.now()
            let (publisher, offer) = try await generator.makePublisher(video: video, videoKbps: videoKbps)
            let answer = try await signalling.publish(room: room, offer: offer, peer: publisher)
            try await generator.completePublisher(publisher, answer: answer)
            try await waitUntil("publisher \(room) connected", generator, publisher) { await generator.isConnected(publisher) ? 0 : nil }
            let connected = LoadGenerator.now()
            let (subscriberOffer, token) = try await signalling.subscribe(room: room)
            let (subscriber, subscriberAnswer) = try await generator.makeSubscriber(offer: subscriberOffer)
            try await signalling.answer(token: token, sdp: subscriberAnswer, peer: subscriber)
            let first = try await waitUntil("first packet at subscriber \(room)", generator, subscriber) { await generator.firstMediaAt(subscriber) }
            totals.append(Double(first &- start) / 1e6)
            publishing.append(Double(connected &- start) / 1e6)
            subscribing.append(Double(first &- connected) / 1e6)
        }
        func stats(_ values: [Double]) -> [String: Double] {
            let sorted = values.sorted()
            func at(_ q: Double) -> Double { (sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] * 10).rounded() / 10 }
            return ["p50": at(0.5), "p90": at(0.9), "min": at(0), "max": at(1)]
        }
        let result: [String: Any] = [
            "server": signalling.name, "joins": count, "video": video,
            "join_ms": stats(totals), "publisher_connected_ms": stats(publishing), "subscriber_first_packet_ms": stats(subscribing),
        ]
        try print(result, json: json)
        return 0
    }

    /// Polls every millisecond (5 s at most) until `value` gives a result.
    @discardableResult
    static func waitUntil(_ what: String, _ generator: LoadGenerator, _ peer: LoadGenerator.Peer,
                          _ value: () async -> UInt64?) async throws -> UInt64 {
        let deadline = LoadGenerator.now() + 5_000_000_000
        while LoadGenerator.now() < deadline {
            if let v = await value() { return v }
            try await Task.sleep(for: .milliseconds(1))
        }
        throw CLIError("\(what): not within 5 s (\(await generator.describe(peer)))")
    }

    static func print(_ result: [String: Any], json: Bool) throws {
        if json {
            let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
            Swift.print(String(decoding: data, as: UTF8.self))
        } else {
            for key in result.keys.sorted() { Swift.print("\(key.padding(toLength: 34, withPad: " ", startingAt: 0)) \(result[key]!)") }
        }
    }
}

/// How a benchmark puts peers in rooms on one server.
protocol RoomSignalling: Sendable {
    var name: String { get }
    func prepare(room: Int, publishers: Int) async throws
    /// Publishes the offer in `room`; the server's answer.
    func publish(room: Int, offer: String, peer: LoadGenerator.Peer) async throws -> String
    /// A subscription to every publisher in `room`: the server's offer, and a token for `answer`.
    func subscribe(room: Int) async throws -> (offer: String, token: String)
    func answer(token: String, sdp: String, peer: LoadGenerator.Peer) async throws
    func close() async
}

/// Switchboard's development routes (`serve --dev`), as `load` uses them.
struct SwitchboardSignalling: RoomSignalling {
    let base: String
    let http: HTTPClient
    let prefix = "peers-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
    var name: String { "switchboard" }

    private func post(_ path: String, _ sdp: String?) async throws -> [String: String] {
        let body = try sdp.map { try JSONSerialization.data(withJSONObject: ["sdp": $0]) } ?? Data()
        let response = try await http.execute(HTTPClientRequest(
            method: .POST, url: base + path, headers: ["content-type": "application/json"], body: Array(body)))
        guard (200..<300).contains(response.status) else { throw CLIError("\(path): HTTP \(response.status) \(response.text)") }
        if response.body.isEmpty { return [:] }
        let object = (try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]) ?? [:]
        return object.compactMapValues { $0 as? String }
    }

    func prepare(room: Int, publishers: Int) async throws {}

    func publish(room: Int, offer: String, peer: LoadGenerator.Peer) async throws -> String {
        guard let answer = try await post("/test/media/rooms/\(prefix)-\(room)/publish", offer)["sdp"] else {
            throw CLIError("publish: no SDP in reply")
        }
        return answer
    }

    func subscribe(room: Int) async throws -> (offer: String, token: String) {
        let reply = try await post("/test/media/rooms/\(prefix)-\(room)/subscribe", nil)
        guard let sdp = reply["sdp"], let transport = reply["transport"] else { throw CLIError("subscribe: no SDP in reply") }
        return (sdp, transport)
    }

    func answer(token: String, sdp: String, peer: LoadGenerator.Peer) async throws {
        _ = try await post("/test/media/transports/\(token)/answer", sdp)
    }

    func close() async {}
}

/// Janus's VideoRoom: a room per benchmark room, a handle per peer, candidates by trickle.
actor JanusSignalling: RoomSignalling {
    let room: JanusVideoRoom
    let generator: LoadGenerator
    private let firstRoom = UInt64.random(in: 1_000_000...1_000_000_000)
    private var feeds: [Int: [JanusVideoRoom.Feed]] = [:]
    private var handles: [String: JanusSession.Handle] = [:]
    nonisolated var name: String { "janus" }

    init(room: JanusVideoRoom, generator: LoadGenerator) {
        self.room = room
        self.generator = generator
    }

    private func id(_ index: Int) -> UInt64 { firstRoom + UInt64(index) }

    func prepare(room index: Int, publishers: Int) async throws {
        try await room.createRoom(id(index), publishers: publishers)
    }

    func publish(room index: Int, offer: String, peer: LoadGenerator.Peer) async throws -> String {
        let handle = try await room.session.attach(JanusVideoRoom.plugin)
        let (answer, feed) = try await room.publish(handle, room: id(index), offer: offer)
        feeds[index, default: []].append(feed)
        try await room.session.trickle(handle, candidate: try await generator.hostCandidate(peer))
        endOfCandidates(handle, peer)
        return answer
    }

    func subscribe(room index: Int) async throws -> (offer: String, token: String) {
        let handle = try await room.session.attach(JanusVideoRoom.plugin)
        // Janus offers a feed only once its peer connection is up on Janus's side, which may be a
        // moment after the generator's; a real client waits for the room's `publishers` event.
        var attempt = 0
        let offer: String
        while true {
            do {
                offer = try await room.subscribe(handle, room: id(index), feeds: feeds[index] ?? [])
                break
            } catch let error as JanusError where error.description.contains("428") && attempt < 200 {
                attempt += 1
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        let token = "\(index):\(handle.id)"
        handles[token] = handle
        return (offer, token)
    }

    func answer(token: String, sdp: String, peer: LoadGenerator.Peer) async throws {
        guard let handle = handles.removeValue(forKey: token), let index = token.split(separator: ":").first.flatMap({ Int($0) }) else {
            throw CLIError("janus: unknown subscription \(token)")
        }
        try await room.start(handle, room: id(index), answer: sdp)
        try await room.session.trickle(handle, candidate: try await generator.hostCandidate(peer))
        endOfCandidates(handle, peer)
    }

    /// Trickles the end of candidates once the peer is connected (at most 10 s later).
    private nonisolated func endOfCandidates(_ handle: JanusSession.Handle, _ peer: LoadGenerator.Peer) {
        let (session, generator) = (room.session, generator)
        Task {
            for _ in 0..<2000 where !(await generator.isConnected(peer)) {
                try? await Task.sleep(for: .milliseconds(5))
            }
            try? await session.trickle(handle, candidate: nil)
        }
    }

    func close() async { await room.session.close() }
}
