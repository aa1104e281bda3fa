import Crypto
import Foundation
import Media
import MediaLoad
import Runtime
import SwitchboardClient
import Wire

/// `switchboard load`: P publishers and S subscribers per room, each a member signed in as a deployment's
/// clients are (an application, a user and JWT each, a realtime session, `rtc:*` or `video:*`), or
/// through `switchboard serve --dev`'s development routes; media on our own stack in the client role.
/// Reports forwarded packets/s, loss, added one-way latency, join time, and (with `--server-pid`) the
/// server's CPU from /proc.
struct LoadCommand {
    static let command = Command(name: "load", summary: "media load generator (SFU benchmark)", usage: usage) { args in
        try await run(args)
    }

    static let usage = """
        Usage: switchboard load --server http://127.0.0.1:8080 [--data DIR | --api-key KEY --api-secret SECRET] [options]
               switchboard load --server http://127.0.0.1:8080 --dev-routes [options]
               switchboard load --in-process [--consumers 1,10,100] [--packets N] [--payload BYTES] [--srtp gcm|cm] [--source opus|vp8|simulcast]
               switchboard load --udp-floor [--consumers 100,1000] [--payload BYTES] [--duration SEC] [--bursts-per-s N] [--segments K]

          --rooms N          rooms (default 1)
          --publishers P     publishers per room (default 1)
          --subscribers S    subscribers per room (default 10)
          --duration SEC     measured seconds (default 10)
          --warmup SEC       seconds after connecting before measuring (default 2)
          --threads T        client event loops (default 1)
          --video            publishers also send 100 video-sized packets/s
          --video-kbps K     ... at K kb/s instead (1100-byte payloads; implies --video)
          --video-capture F  publishers replay the VP8 frames of IVF file F in real time
                             (scripts/make-video-capture makes one; implies --video)
          --room NAME        room name prefix (default: load-RANDOM); rooms are NAME-0, NAME-1, ...
          --mode sfu|mixed   how the rooms carry audio (default sfu): forwarded, or mixed on the
                             server (each subscriber gets one mixed stream; development routes only)
          --legs             each publisher also subscribes (--subscribers is ignored): in mixed
                             rooms hearing its own mix-minus; in video sessions receiving every
                             other publisher's stream (--rooms N --publishers 2 --legs: N 1:1 calls)
          --srtp gcm|cm      SRTP profile the peers ask for: AEAD_AES_128_GCM (default, what the
                             server prefers) or AES128_CM_HMAC_SHA1_80 (what Chromium prefers)
          --server-pid PID   report the server's CPU and RSS from /proc
          --timeout SEC      give up (exit 3) when the whole run takes longer (default: 120 s
                             plus warmup, duration and 50 ms per peer) — a saturated server or
                             generator stops answering rather than failing
          --json             print the report as JSON
          --poll-receivers   each generator thread reads its peers' sockets in turn, over and over,
                             instead of waiting in epoll: over loopback the server is then charged
                             the delivery into them but not the receivers' wake-ups, as --udp-floor's
                             sender is; each --threads thread keeps a whole CPU busy
          --janus URL        the same load through Janus's VideoRoom (HTTP API root, e.g.
                             http://198.18.0.1:8088/janus) instead of --server (scripts/bench-peers);
                             the peers bind --bind HOST (default: the URL's host); with --mode mixed
                             [--legs], through Janus's AudioBridge (each peer one participant)
          --joins N          join time instead: N publisher+subscriber pairs, each in a new room

        Signaling (default: the authenticated path, what a deployment runs; the server needs no --dev):
          the account's credentials create an application (or --app-id ID --key-file PEM reuse one);
          every member is a new user of it with its own JWT, logs in over /v1/realtime (the SDK's
          Session), joins its room's conversation (rtc:join) and publishes (rtc:publish) or
          subscribes (rtc:subscribe, rtc:answer). With video, a room is a video session: a token
          per connection, video:connect, video:publish, and one video:subscribe per stream.
          --data DIR         the server's data directory, for account.json (SWITCHBOARD_DATA)
          --api-key KEY      account api key (SWITCHBOARD_API_KEY) ...
          --api-secret S     ... and secret (SWITCHBOARD_API_SECRET)
          --ca FILE          CA certificate for an https server
          --app-id ID        reuse this application ...
          --key-file FILE    ... signing with its private key (PEM)
          --dev-routes       the development routes instead (/test/media/...; the server runs with
                             --dev): no users or sessions, for comparison and for mixed rooms
        The report gives join_ms_p50/p99 (a listener's signaling, first request to accepted answer),
        setup_seconds (everything up to the last peer connected) and, authenticated, members_joined.

        Publishers send real Opus (a 400 Hz tone looped every second, padded to 160 bytes with the
        send time); in each room the first publisher's tone is loud for the first 100 ms of every
        second. Forwarded packets carry their send time; a mix does not, so in mixed rooms latency is
        measured per burst: its first packet leaving the publisher to the first loud mixed packet.
        The report gives the server's tick lateness over the window (GET /test/media/ticks).

        --udp-floor measures what the kernel alone charges for the forwarding output pattern: one
        socket sending datagrams (default 172 bytes) round-robin to N local sockets with sendmmsg as
        fast as it can, no user-space packet work; reports datagrams/s and CPU per datagram. With
        --bursts-per-s it sends what forwarding N input packets a second sends instead: a burst of one
        datagram per socket, then a sleep until the next, to receivers that wait in epoll. With
        --segments K each socket gets K datagrams in a row, sent as one UDP GSO message (what the
        server does with a subscriber's run of a publisher's packets from one receive batch).

        --in-process measures the forwarding path alone (no sockets, no peers): one producer
        to N consumers, SRTP unprotect -> route -> rewrite -> SRTP protect, on this thread.
        --source vp8 sends one VP8 stream instead of Opus; --source simulcast three VP8 layers taking
        turns (RID header extension), each consumer sending the one listed last.
        """

    static func run(_ argv: [String]) async throws -> Int32 {
        let args = try Arguments(argv, booleanFlags: ["--json", "--help", "-h", "--video", "--in-process", "--udp-floor", "--legs", "--dev-routes", "--poll-receivers"])
        if args.flag("--in-process") { return try inProcess(args) }
        if args.flag("--udp-floor") { return try udpFloor(args) }
        if args["--janus"] != nil || args["--joins"] != nil { return try await PeerBench.run(args) }
        try args.check(known: ["--server", "--rooms", "--publishers", "--subscribers", "--duration", "--warmup", "--threads", "--server-pid", "--json", "--video", "--video-kbps", "--video-capture", "--room", "--srtp", "--timeout", "--mode", "--legs",
                              "--dev-routes", "--poll-receivers", "--api-key", "--api-secret", "--data", "--ca", "--app-id", "--key-file"])
        let base = try args.require("--server").trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        func int(_ name: String, _ fallback: Int) throws -> Int {
            guard let v = args[name] else { return fallback }
            guard let n = Int(v), n >= 0 else { throw CLIError("\(name): expected a number") }
            return n
        }
        let mode = args["--mode"] ?? "sfu"
        guard mode == "sfu" || mode == "mixed" else { throw CLIError("--mode: expected sfu or mixed") }
        let mixed = mode == "mixed"
        // Mixed rooms exist only on the development routes.
        let devRoutes = args.flag("--dev-routes") || mixed
        let legs = args.flag("--legs")
        let rooms = try int("--rooms", 1)
        let publishers = try int("--publishers", 1)
        let subscribers = legs ? 0 : try int("--subscribers", 10)
        // A mixed room's mixer holds every publisher and subscriber as a participant.
        let roomQuery = "?mode=\(mode)" + (mixed ? "&capacity=\(min(10_000, publishers + subscribers + 8))" : "")
        let duration = try int("--duration", 10)
        let warmup = try int("--warmup", 2)
        let threads = max(1, try int("--threads", 1))
        let serverPID = args["--server-pid"].flatMap { Int32($0) }
        let videoKbps = try int("--video-kbps", 880)
        var capture: VideoCapture?
        if let path = args["--video-capture"] {
            guard let data = FileManager.default.contents(atPath: path) else { throw CLIError("--video-capture: cannot read \(path)") }
            do { capture = try VideoCapture(ivf: Array(data)) } catch { throw CLIError("--video-capture: \(path): \(error)") }
        }
        let video = args.flag("--video") || args["--video-kbps"] != nil || capture != nil
        if legs && !mixed && (devRoutes || !video) {
            throw CLIError("--legs: only with --mode mixed, or with --video on the authenticated path")
        }
        // A member on the authenticated path also gets a user, a token, a login and a join.
        let limit = try int("--timeout", 120 + warmup + duration + rooms * (publishers + subscribers) / (devRoutes ? 20 : 5))
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: TimeInterval(limit))
            FileHandle.standardError.write(Data("load: no result within \(limit) s (--timeout): the server or the generator is saturated\n".utf8))
            exit(3)
        }

        let group = EventLoopGroup(threads: 1, name: "load-http")
        defer { group.shutdownAndWait() }
        let http = HTTPClient(group: group)
        func post(_ path: String, _ sdp: String?, _ query: String? = nil) async throws -> [String: Any] {
            let body = try sdp.map { try JSONSerialization.data(withJSONObject: ["sdp": $0]) } ?? Data()
            let response = try await http.execute(HTTPClientRequest(
                method: .POST, url: base + path + (path.hasPrefix("/test/media/rooms/") ? query ?? roomQuery : ""),
                headers: ["content-type": "application/json"], body: Array(body)))
            guard (200..<300).contains(response.status) else { throw CLIError("\(path): HTTP \(response.status) \(response.text)") }
            if response.body.isEmpty { return [:] }
            return (try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]) ?? [:]
        }
        func serverStats() async -> [[String: Any]] {
            guard let r = try? await http.execute(HTTPClientRequest(url: base + "/test/media/stats")),
                  let list = try? JSONSerialization.jsonObject(with: Data(r.body)) as? [[String: Any]] else { return [] }
            return list
        }
        /// The server's datagrams sent so far, and when it counted them (the request's midpoint).
        func serverDatagramsOut() async -> (count: UInt64, at: Date) {
            let asked = Date()
            let count = await serverStats().reduce(0) { $0 + (($1["datagramsOut"] as? NSNumber)?.uint64Value ?? 0) }
            return (count, asked.addingTimeInterval(Date().timeIntervalSince(asked) / 2))
        }

        func ticks(reset: Bool) async -> [[String: Any]] {
            guard let r = try? await http.execute(HTTPClientRequest(url: base + "/test/media/ticks" + (reset ? "?reset=1" : ""))),
                  (200..<300).contains(r.status),
                  let list = try? JSONSerialization.jsonObject(with: Data(r.body)) as? [[String: Any]] else { return [] }
            return list
        }

        let generator = try LoadGenerator(threads: threads, srtpProfiles: [try srtpProfile(args)], pollingReceivers: args.flag("--poll-receivers"))
        defer { generator.shutdown() }
        let opus = try OpusLoop()
        let clocks = (0..<rooms).map { _ in BurstClock() }
        let roomPrefix = args["--room"] ?? "load-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let rssBefore = serverPID.flatMap(residentKiB)
        var publishing: [(room: Int, transport: String)] = []
        /// Milliseconds from a listener's first signaling request to its answer being accepted.
        var joinMilliseconds: [Double] = []
        func timed(_ body: () async throws -> Void) async throws {
            let started = ContinuousClock.now
            try await body()
            let took = ContinuousClock.now - started
            joinMilliseconds.append(Double(took.components.seconds) * 1000 + Double(took.components.attoseconds) / 1e15)
        }
        let setupStarted = Date()
        var auth: AuthenticatedLoad?
        if !devRoutes {
            auth = try await AuthenticatedLoad.prepare(args, base: base, prefix: roomPrefix, rooms: rooms, video: video)
        }
        defer { ClientLoops.shutdown() }
        for room in 0..<rooms {
            for p in 0..<publishers {
                let (peer, offer) = try await generator.makePublisher(video: video, videoKbps: videoKbps, capture: capture,
                                                                      opus: opus, burst: p == 0 ? clocks[room] : nil)
                if let auth {
                    let answer = try await auth.publish(room: room, index: p, offer: offer)
                    try await generator.completePublisher(peer, answer: answer)
                    continue
                }
                let reply = try await post("/test/media/rooms/\(roomPrefix)-\(room)/publish", offer)
                guard let answer = reply["sdp"] as? String else { throw CLIError("publish: no SDP in reply") }
                try await generator.completePublisher(peer, answer: answer)
                if let transport = reply["transport"] as? String { publishing.append((room, transport)) }
            }
        }
        try await waitConnected(generator, expected: rooms * publishers)
        let rssPublishers = serverPID.flatMap(residentKiB)
        // Set-up without forwarding load: on the authenticated path every join is pushed to every
        // member's socket, and that work would otherwise share the server's CPU with the forwarding.
        // Mixed rooms keep sending (their listeners measure latency on the publishers' bursts).
        if !mixed { await generator.holdMedia(true) }
        /// A subscriber in `room`: a listener of its own, or (legs) hearing as the publisher `speaker`.
        func subscribe(room: Int, speaker: String?) async throws {
            let query = roomQuery + (speaker.map { "&speaker=" + $0 } ?? "")
            let offer = try await post("/test/media/rooms/\(roomPrefix)-\(room)/subscribe", nil, query)
            guard let sdp = offer["sdp"] as? String, let transport = offer["transport"] as? String else {
                throw CLIError("subscribe: no SDP in reply")
            }
            let (_, answer) = try await generator.makeSubscriber(offer: sdp, burst: mixed ? clocks[room] : nil)
            _ = try await post("/test/media/transports/\(transport)/answer", answer)
        }
        let makeAnswer: @Sendable (String) async throws -> String = { offer in try await generator.makeSubscriber(offer: offer).answer }
        if let auth {
            for room in 0..<rooms {
                if legs {
                    for p in 0..<publishers { try await timed { try await auth.subscribe(room: room, publisher: p, answer: makeAnswer) } }
                } else {
                    for _ in 0..<subscribers { try await timed { try await auth.subscribe(room: room, answer: makeAnswer) } }
                }
            }
        } else if legs {
            for (room, transport) in publishing { try await timed { try await subscribe(room: room, speaker: transport) } }
        } else {
            for room in 0..<rooms {
                for _ in 0..<subscribers { try await timed { try await subscribe(room: room, speaker: nil) } }
            }
        }
        // A video session's listener has a connection per stream it receives; a leg hears everyone else.
        let subscribing = await generator.connectionCounts().total - rooms * publishers
        try await waitConnected(generator, expected: rooms * publishers + subscribing)
        let setupSeconds = Date().timeIntervalSince(setupStarted)
        await generator.holdMedia(false)
        let serverMembers = await auth?.serverJoinedMembers()
        try await Task.sleep(for: .seconds(warmup))
        _ = await ticks(reset: true)

        // Each server-side count carries the time it was read, so a slow stats reply from a
        // saturated server does not stretch or shrink its window.
        let outBefore = await serverDatagramsOut()
        let cpuBefore = CPUSample(serverPID: serverPID)
        let started = Date()
        await generator.startMeasuring()
        try await Task.sleep(for: .seconds(duration))
        let elapsed = Date().timeIntervalSince(started)
        let report = await generator.stopMeasuring(seconds: elapsed)
        let cpuAfter = CPUSample(serverPID: serverPID)
        let outAfter = await serverDatagramsOut()
        let rssAfter = serverPID.flatMap(residentKiB)
        let tickWindow = await ticks(reset: false)

        let serverOutRate = Double(outAfter.count &- outBefore.count) / outAfter.at.timeIntervalSince(outBefore.at)
        // A mixed room's subscriber consumes one stream, the mix; a forwarding one every track.
        let consumers = mixed ? subscribing : rooms * publishers * (legs ? publishers - 1 : subscribers) * (video ? 2 : 1)
        var result: [String: Any] = [
            "mode": mode, "legs": legs, "opus_mean_payload_bytes": (opus.meanPayload * 10).rounded() / 10,
            "rooms": rooms, "publishers_per_room": publishers, "subscribers_per_room": legs ? publishers : subscribers, "video": video,
            "consumers": consumers, "seconds": (elapsed * 100).rounded() / 100,
            "sent_packets_per_s": Int(Double(report.publishersSent) / elapsed),
            "received_packets_per_s": Int(Double(report.subscribersReceived) / elapsed),
            "signaling": auth == nil ? "dev-routes" : "authenticated",
            "setup_seconds": (setupSeconds * 100).rounded() / 100,
            "join_ms_p50": percentile(joinMilliseconds, 0.50), "join_ms_p99": percentile(joinMilliseconds, 0.99),
            "loss_percent": (report.lossFraction * 10_000).rounded() / 100,
            "latency_ms_p50": report.latency.percentile(0.50), "latency_ms_p99": report.latency.percentile(0.99),
            "latency_ms_p999": report.latency.percentile(0.999),
        ]
        // The development routes count the server's datagrams; a production server does not say.
        if outAfter.count > 0 { result["server_datagrams_out_per_s"] = Int(serverOutRate) }
        if let auth {
            result["application_id"] = auth.app.id
            result[video ? "video_sessions" : "conversations"] = auth.rooms
            result["members_joined"] = auth.joined
            if let serverMembers { result["server_members_joined"] = serverMembers }
        }
        if let capture {
            result["capture_width"] = capture.width
            result["capture_height"] = capture.height
            result["capture_kbps"] = Int(capture.kilobitsPerSecond)
            result["capture_packets_per_s"] = (capture.packetsPerSecond * 10).rounded() / 10
        }
        if let worker = tickWindow.first {
            result["server_tick_lateness_us_p50"] = worker["p50Microseconds"]
            result["server_tick_lateness_us_p99"] = worker["p99Microseconds"]
            result["server_tick_lateness_us_p999"] = worker["p999Microseconds"]
            result["server_ticks"] = worker["ticks"]
            result["server_early_ticks"] = worker["earlyTicks"]
            result["server_missed_ticks"] = worker["missedTicks"]
            result["server_tick_work_us_p99"] = worker["workP99Microseconds"]
            result["server_tick_work_us_max"] = worker["workMaxMicroseconds"]
            result["server_receive_pass_us_p99"] = worker["receiveP99Microseconds"]
            result["server_receive_pass_us_max"] = worker["receiveMaxMicroseconds"]
        }
        if let worker = await serverStats().first {
            result["server_forwarding_us_p50"] = worker["forwardingMicrosecondsP50"]
            result["server_forwarding_us_p99"] = worker["forwardingMicrosecondsP99"]
            // Of the datagrams the worker sent since it started, the share that rode in a segmented
            // send behind the first of their run (UDP GSO: one pass through the kernel's output path per run).
            if let out = (worker["datagramsOut"] as? NSNumber)?.doubleValue, out > 0,
               let coalesced = (worker["segmentsCoalesced"] as? NSNumber)?.doubleValue {
                result["server_segmented_share"] = (coalesced / out * 1000).rounded() / 1000
            }
        }
        // A generator near its CPUs' capacity under-reports what the server could do (generator_cpu_cores).
        if let cores = cpuAfter.record(since: cpuBefore, into: &result), cores > 0 {
            result["forwarded_packets_per_s_per_core"] = Int(serverOutRate / cores)
        }
        if let before = rssBefore, let after = rssAfter, let mid = rssPublishers, consumers > 0 {
            result["server_rss_kib"] = after
            result["server_kib_per_consumer"] = (Double(after - mid) / Double(consumers) * 10).rounded() / 10
            result["server_kib_per_subscriber"] = (Double(after - mid) / Double(max(1, subscribing)) * 10).rounded() / 10
            result["server_kib_per_publisher"] = (Double(mid - before) / Double(max(1, rooms * publishers)) * 10).rounded() / 10
        }
        if args.flag("--json") {
            let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            for key in result.keys.sorted() { print("\(key.padding(toLength: 34, withPad: " ", startingAt: 0)) \(result[key]!)") }
        }
        await auth?.close()
        return report.subscribersReceived > 0 ? 0 : 1
    }

    /// The `fraction` percentile of `values` in milliseconds, to 0.1 ms (0 when there are none).
    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return (sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))] * 10).rounded() / 10
    }

    static func inProcess(_ args: Arguments) throws -> Int32 {
        try args.check(known: ["--consumers", "--packets", "--payload", "--in-process", "--json", "--srtp", "--source"])
        let profile = try srtpProfile(args)
        guard let source = FanoutBenchmark.Source(rawValue: args["--source"] ?? "opus") else {
            throw CLIError("--source: expected opus, vp8 or simulcast")
        }
        let counts = (args["--consumers"] ?? "1,10,100,1000").split(separator: ",").compactMap { Int($0) }
        let packets = Int(args["--packets"] ?? "") ?? 20_000
        let payload = Int(args["--payload"] ?? "") ?? 160
        var rows: [[String: Any]] = []
        for consumers in counts {
            // Keep the output volume similar whatever the fan-out.
            let inputs = max(200, min(packets, packets * 10 / max(1, consumers)))
            let r = try FanoutBenchmark.run(consumers: consumers, packets: inputs, payloadSize: payload, profile: profile, source: source)
            rows.append([
                "consumers": consumers, "input_packets": r.inputPackets, "output_packets": r.outputPackets,
                "output_packets_per_s": Int(r.outputPacketsPerSecond), "ns_per_output_packet": Int(r.nanosecondsPerOutputPacket),
                "kib_per_consumer_transport": (r.bytesPerConsumerTransport / 102.4).rounded() / 10,
                "kib_per_consumer_shared": (r.bytesPerConsumer / 102.4).rounded() / 10,
            ])
        }
        try printRows(rows, json: args.flag("--json"), columns: [
            ("consumers", "consumers"), ("output pkt/s", "output_packets_per_s"), ("ns/pkt", "ns_per_output_packet"),
            ("KiB/consumer+transport", "kib_per_consumer_transport"), ("KiB/consumer(shared transport)", "kib_per_consumer_shared"),
        ])
        return 0
    }

    static func udpFloor(_ args: Arguments) throws -> Int32 {
        try args.check(known: ["--consumers", "--payload", "--duration", "--bursts-per-s", "--segments", "--udp-floor", "--json"])
        let counts = (args["--consumers"] ?? "100,1000").split(separator: ",").compactMap { Int($0) }
        let payload = Int(args["--payload"] ?? "") ?? 172
        let seconds = Double(args["--duration"] ?? "") ?? 5
        let bursts = args["--bursts-per-s"].flatMap { Double($0) }.flatMap { $0 > 0 ? $0 : nil }
        guard let segments = Int(args["--segments"] ?? "1"), (1...32).contains(segments) else {
            throw CLIError("--segments: expected 1 to 32 datagrams per send")
        }
        // The sender on the first CPU this process may use, the receivers on the last.
        let cpus = allowedCPUs(getpid()) ?? []
        let sender = cpus.first
        let receiver = cpus.count > 1 ? cpus.last : nil
        var rows: [[String: Any]] = []
        for receivers in counts {
            let busyBefore = sender.flatMap { cpusBusy([$0]) }
            let r = try UDPSendFloor.run(
                receivers: receivers, payload: payload, seconds: seconds, burstsPerSecond: bursts, segments: segments,
                senderCPU: sender, receiverCPU: receiver)
            let busyAfter = sender.flatMap { cpusBusy([$0]) }
            let sent = Double(max(1, r.sent))
            var row: [String: Any] = [
                "receivers": receivers, "payload_bytes": payload, "segments": segments, "datagrams_per_s": Int(sent / r.seconds),
                "sender_thread_us_per_datagram": (r.senderCPUSeconds / sent * 1e8).rounded() / 100,
                "received_percent": (Double(r.received) / sent * 1000).rounded() / 10,
            ]
            if let bursts { row["bursts_per_s"] = bursts }
            if let a = busyBefore, let b = busyAfter {
                row["sender_cpu_busy_us_per_datagram"] = ((b - a) / sent * 1e8).rounded() / 100
            }
            rows.append(row)
        }
        try printRows(rows, json: args.flag("--json"), columns: [
            ("receivers", "receivers"), ("datagrams/s", "datagrams_per_s"), ("µs/datagram (thread)", "sender_thread_us_per_datagram"),
            ("µs/datagram (CPU busy)", "sender_cpu_busy_us_per_datagram"), ("received %", "received_percent"),
        ])
        return 0
    }

    /// Benchmark rows as one JSON array, or as a table of `columns` (title, key), each column as
    /// wide as its title plus two spaces.
    static func printRows(_ rows: [[String: Any]], json: Bool, columns: [(title: String, key: String)]) throws {
        if json {
            let data = try JSONSerialization.data(withJSONObject: rows, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        func line(_ cells: [String]) -> String {
            var text = zip(cells, columns).map { $0.padding(toLength: $1.title.count + 2, withPad: " ", startingAt: 0) }.joined()
            while text.last == " " { text.removeLast() }
            return text
        }
        print(line(columns.map(\.title)))
        for row in rows { print(line(columns.map { row[$0.key].map { String(describing: $0) } ?? "-" })) }
    }

    static func srtpProfile(_ args: Arguments) throws -> SRTPProfile {
        switch args["--srtp"] ?? "gcm" {
        case "gcm": return .aeadAES128GCM
        case "cm": return .aes128CMSHA1_80
        default: throw CLIError("--srtp: expected gcm or cm")
        }
    }

    static func waitConnected(_ generator: LoadGenerator, expected: Int) async throws {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let counts = await generator.connectionCounts()
            if counts.failed > 0 { throw CLIError("\(counts.failed) peers failed to connect: \(counts.failure ?? "?")") }
            if counts.connected >= expected { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        let counts = await generator.connectionCounts()
        throw CLIError("only \(counts.connected) of \(expected) peers connected within 30 s (\(counts.stuck ?? "?"))")
    }

    /// What a measured window cost in CPU, read at its start and at its end: the server process,
    /// everything the CPUs it may run on did (softirq delivery included), and the load generator.
    struct CPUSample {
        let at = Date()
        let server: Double?
        let busy: Double?
        let generator: Double?

        init(serverPID: Int32?) {
            server = serverPID.flatMap(LoadCommand.cpuSeconds)
            busy = serverPID.flatMap(LoadCommand.allowedCPUsBusy)
            generator = LoadCommand.cpuSeconds(getpid())
        }

        /// Writes the cores used since `start` (`server_cpu_cores`, `server_cpus_busy_cores`,
        /// `generator_cpu_cores`) into `result`; returns the server's.
        @discardableResult
        func record(since start: CPUSample, into result: inout [String: Any]) -> Double? {
            let window = at.timeIntervalSince(start.at)
            func cores(_ a: Double?, _ b: Double?) -> Double? {
                guard let a, let b, window > 0 else { return nil }
                return (b - a) / window
            }
            let server = cores(start.server, self.server)
            for (key, value) in [("server_cpu_cores", server), ("server_cpus_busy_cores", cores(start.busy, busy)),
                                 ("generator_cpu_cores", cores(start.generator, generator))] {
                if let value { result[key] = (value * 1000).rounded() / 1000 }
            }
            return server
        }
    }

    /// utime + stime of a process in seconds (/proc/PID/stat fields 14 and 15).
    static func cpuSeconds(_ pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Busy seconds (everything but idle and iowait, /proc/stat) summed over the CPUs the process
    /// may run on. On loopback this also counts work not charged to the process: softirq
    /// delivery of its datagrams to the receivers' sockets, often run by ksoftirqd.
    static func allowedCPUsBusy(_ pid: Int32) -> Double? {
        allowedCPUs(pid).flatMap(cpusBusy)
    }

    /// The CPUs a process may run on (`Cpus_allowed_list` in /proc/PID/status).
    static func allowedCPUs(_ pid: Int32) -> [Int]? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") }) else { return nil }
        var cpus = Set<Int>()
        for range in line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces).split(separator: ",") {
            let bounds = range.split(separator: "-").compactMap { Int($0) }
            guard let low = bounds.first else { continue }
            cpus.formUnion(low...(bounds.last ?? low))
        }
        return cpus.sorted()
    }

    /// Busy seconds of the given CPUs since boot (/proc/stat).
    static func cpusBusy(_ cpus: [Int]) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        var busy: Double = 0
        for row in stat.split(separator: "\n") where row.hasPrefix("cpu") && !row.hasPrefix("cpu ") {
            let fields = row.split(separator: " ")
            guard let cpu = Int(fields[0].dropFirst(3)), cpus.contains(cpu) else { continue }
            let ticks = fields.dropFirst().compactMap { Double($0) }
            guard ticks.count >= 5 else { continue }
            busy += ticks.reduce(0, +) - ticks[3] - ticks[4]
        }
        return busy / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func residentKiB(_ pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "")
        }
        return nil
    }
}
