import Audio
import Foundation
import Synchronization
import SwitchboardClient
import Wire

/// `switchboard client`: a headless client on the SDK that joins a room or a video session, or places
/// or answers a voice call, and prints what happens, one line per event (JSON lines with --json).
struct ClientCommand {
    static let command = Command(name: "client", summary: "join a room or a video session, or make a call, as a headless client",
                                 usage: usage) { args in
        try await run(args)
    }

    static let usage = """
        Usage: switchboard client room join ROOM --as NAME [--play tone:440|FILE.wav] [--record OUT.wav] [--ice-transport all|relay] [--json]
               switchboard client video join SESSION_ID --token TOKEN [--publish FILE.ivf[,FILE.ivf…] [--audio-fallback]] [--name NAME] [--captions]
                                             [--media-address IP] [--ice-transport all|relay] [--json]
               switchboard client video join ROOM --app URL [the options above but --token]
               switchboard client call NUMBER|USER --as NAME [--context JSON] [--dtmf DIGITS] [--ice-transport all|relay] [--json]
               switchboard client call --answer --as NAME [--json]

          --server URL     the server (default $SWITCHBOARD_URL, else http://127.0.0.1:8080)
          --app URL        the rooms app server that logs NAME in (default SERVER/rooms/api, `serve --dev`); with video,
                           the video app server (switchboard-video) that gives ROOM's session and a token for it
          --seconds N      leave after N seconds (default: until interrupted)
          --play SOURCE    what to send: tone:FREQUENCY, or a 16-bit PCM WAV file (default: nothing)
          --record FILE    write what the others say (in a call: the phone or user at the other end) to a WAV file on leaving
          --publish FILE   a VP8 IVF recording to publish as a camera (with a 440 Hz tone as audio); two or three
                           recordings of one picture at different sizes, comma-separated, are sent as simulcast
          --captions       (video) ask for the captions of every stream and print them while live captions run
          --audio-fallback (video) have the server judge our own link: the video stops while it cannot carry it
          --media-address IP (video) send and receive media on this local address only (peer to peer in a relayed
                           session: the only candidate offered; default every address)
          --ice-transport relay  send all media through the TURN server the server gives (its --ice-servers)
          --token TOKEN    (call) log in with this user token instead of through the app server
          --context JSON   (call) a JSON object the application's answer URL gets as custom_data
          --dtmf DIGITS    (call) digits to send once the call is answered
          --answer         (call) wait for a call to NAME and answer it

        A call is placed through the application (its answer URL's NCCO decides where it goes) and
        prints its events until it ends; with --seconds it hangs up after that long.

        ROOM is a conversation id (CON-…) or the display name of a room the app server lists or creates; a video
        ROOM is any name: the video app server makes a session for it on first use.
        Video join subscribes to every stream and reports frames, key frames and the last key frame's size received.
        """

    static func run(_ argv: [String]) async throws -> Int32 {
        do {
            return try await dispatch(argv)
        } catch {
            ClientLoops.shutdown()
            throw error
        }
    }

    static func dispatch(_ argv: [String]) async throws -> Int32 {
        let args = try Arguments(argv, booleanFlags: ["--json", "--help", "-h", "--answer", "--captions", "--audio-fallback"])
        let positionals = args.positionals
        if positionals.first == "call" {
            try args.check(known: ["--as", "--token", "--app", "--context", "--dtmf", "--answer", "--play", "--record", "--ice-transport", "--json", "--server", "--seconds"])
            return try await CallCommand.run(args, server: serverURL(args), seconds: seconds(args), printer: EventPrinter(json: args.flag("--json")))
        }
        guard positionals.count == 3, positionals[1] == "join" else {
            throw CLIError("expected 'client room join ROOM' or 'client video join SESSION_ID' (see switchboard help client)")
        }
        let server = try serverURL(args)
        let seconds = try seconds(args)
        let printer = EventPrinter(json: args.flag("--json"))
        switch positionals[0] {
        case "room":
            try args.check(known: ["--as", "--play", "--record", "--ice-transport", "--json", "--server", "--app", "--seconds"])
            return try await room(positionals[2], args: args, server: server, seconds: seconds, printer: printer)
        case "video":
            try args.check(known: ["--token", "--app", "--publish", "--name", "--captions", "--audio-fallback", "--media-address", "--ice-transport",
                                   "--json", "--server", "--seconds"])
            let (sessionID, token) = try await videoCredentials(positionals[2], args: args)
            return try await video(sessionID, token: token, args: args, server: server, seconds: seconds, printer: printer)
        default:
            throw CLIError("expected 'room' or 'video' after 'client'")
        }
    }

    static func serverURL(_ args: Arguments) throws -> URL {
        let server = URL(string: args["--server"] ?? ProcessInfo.processInfo.environment["SWITCHBOARD_URL"] ?? "http://127.0.0.1:8080")
        guard let server else { throw CLIError("--server: not a URL") }
        return server
    }

    static func seconds(_ args: Arguments) throws -> Double? {
        try args["--seconds"].map { v -> Double in
            guard let s = Double(v), s > 0 else { throw CLIError("--seconds: expected a positive number") }
            return s
        }
    }

    static func source(_ spec: String?) throws -> AudioSource? {
        guard let spec else { return nil }
        if spec.hasPrefix("tone:") {
            guard let f = Double(spec.dropFirst(5)), f > 0, f < 24_000 else { throw CLIError("--play tone:FREQUENCY, e.g. tone:440") }
            return ToneSource(frequency: f)
        }
        do { return try WAVFileSource(path: spec, loop: true) } catch { throw CLIError("--play: \(error)") }
    }

    /// `--ice-transport all|relay`.
    static func policy(_ args: Arguments) throws -> ICETransportPolicy {
        switch args["--ice-transport"] ?? "all" {
        case "all": return .all
        case "relay": return .relay
        case let other: throw CLIError("--ice-transport: all or relay, not \(other)")
        }
    }

    /// A conversation client's session options from the command line.
    static func sessionOptions(_ args: Arguments) throws -> Session.Options {
        var options = Session.Options()
        options.iceTransportPolicy = try policy(args)
        return options
    }

    static func room(_ room: String, args: Arguments, server: URL, seconds: Double?, printer: EventPrinter) async throws -> Int32 {
        let name = try args.require("--as")
        let app = RoomsAppServer(url: URL(string: args["--app"] ?? server.absoluteString + "/rooms/api") ?? server)
        let source = try source(args["--play"])
        let login = try await app.logIn(name: name)
        let session = try await Session.connect(to: server, token: login.token, options: sessionOptions(args))
        var roomID = room
        if !room.hasPrefix("CON-") {
            if let known = try await app.rooms().first(where: { $0.title == room }) {
                roomID = known.id
            } else {
                roomID = try await app.createRoom(displayName: room)
            }
        }
        let meter = LevelMeter()
        let recorder = args["--record"].map { WAVRecorder(path: $0) }
        let sink = CallbackSink { frame, member in
            meter.receive(frame, from: member)
            recorder?.receive(frame, from: member)
        }
        let events = session.events()
        let states = session.states()
        let printing = Task {
            for await e in events where e.conversationID == roomID {
                printer.print(["event": .string(e.type), "id": .number(Double(e.id)), "from": e.from.map(JSONValue.string) ?? .null,
                               "member": e.memberID.map(JSONValue.string) ?? .null, "user": e.userName.map(JSONValue.string) ?? .null,
                               "text": e.text.map(JSONValue.string) ?? .null],
                              line: "\(e.type) #\(e.id)" + (e.userName.map { " \($0)" } ?? "") + (e.text.map { ": \($0)" } ?? ""))
            }
        }
        let watching = Task {
            for await s in states { printer.print(["state": .string("\(s)")], line: "connection: \(s)") }
        }
        let media = try await session.enableMedia(in: roomID, source: source, sink: sink)
        printer.print(["joined": .string(roomID), "member": .string(media.memberID), "user": .string(name)],
                      line: "joined \(roomID) as \(name) (\(media.memberID))")
        await wait(seconds)
        for (member, level) in meter.levels.sorted(by: { $0.key < $1.key }) {
            printer.print(["heard": .string(member), "frames": .number(Double(level.frames)), "frequency": .number(level.frequency.rounded()),
                           "dbov": .number((level.dBov * 10).rounded() / 10)],
                          line: "heard \(member): \(level.frames) frames, \(Int(level.frequency)) Hz, \(String(format: "%.1f", level.dBov)) dBov")
        }
        let (sending, receiving) = await media.statistics()
        printer.print(["through_turn": ["sending": .bool(sending?.throughTURN ?? false), "receiving": .bool(receiving.throughTURN)]],
                      line: "through TURN: sending \(sending?.throughTURN ?? false), receiving \(receiving.throughTURN)")
        await media.disable()
        try? await session.conversations.leave(roomID)
        try recorder?.finish()
        await session.logout()
        printing.cancel()
        watching.cancel()
        return finish()
    }

    /// SESSION_ID and --token, or with --app the session and token the video app server gives for ROOM.
    static func videoCredentials(_ target: String, args: Arguments) async throws -> (sessionID: String, token: String) {
        guard let app = args["--app"] else { return (target, try args.require("--token")) }
        guard args["--token"] == nil else { throw CLIError("--app and --token: give one (the app server makes the token)") }
        guard let url = URL(string: app), url.scheme != nil else { throw CLIError("--app: not a URL") }
        do {
            let room = try await VideoAppServer(url: url).room(target)
            return (room.sessionID, room.token)
        } catch {
            throw CLIError("the video app server at \(app): \(error)")
        }
    }

    static func video(_ sessionID: String, token: String, args: Arguments, server: URL, seconds: Double?, printer: EventPrinter) async throws -> Int32 {
        let camera = try args["--publish"].map { list -> IVFFileSource in
            let paths = list.split(separator: ",").map(String.init)
            do { return try paths.count > 1 ? IVFFileSource(simulcast: paths) : IVFFileSource(path: list) } catch { throw CLIError("--publish: \(error)") }
        }
        let session = try await VideoSession.connect(to: server, sessionID: sessionID, token: token, mediaAddress: args["--media-address"],
                                                     iceTransportPolicy: try policy(args))
        let captions = args.flag("--captions")
        let counters = CounterBox()
        let events = session.events()
        let printing = Task {
            for await e in events {
                if case .streamCreated(let stream) = e {
                    // Already printed and subscribed from the session's streams at connect.
                    guard let counter = counters.claim(stream.id) else { continue }
                    printer.print(["event": .string(Self.name(e))], line: Self.name(e))
                    do {
                        try await session.subscribe(stream.id, video: counter)
                        if captions { try await session.subscribeToCaptions(stream.id) }
                    } catch {
                        printer.print(["error": .string("\(error)")], line: "subscribe \(stream.id): \(error)")
                    }
                } else {
                    printer.print(["event": .string(Self.name(e))], line: Self.name(e))
                }
            }
        }
        // Streams published before this client connected are created for it too, as OpenTok clients see them.
        for stream in session.streams {
            guard let counter = counters.claim(stream.id) else { continue }
            let created = Self.name(.streamCreated(stream))
            printer.print(["event": .string(created)], line: created)
            try await session.subscribe(stream.id, video: counter)
            if captions { try await session.subscribeToCaptions(stream.id) }
        }
        if let camera {
            let stream = try await session.publish(name: args["--name"] ?? "switchboard-client", audio: ToneSource(frequency: 440), video: camera,
                                                   audioFallback: args.flag("--audio-fallback"))
            printer.print(["published": .string(stream.id)], line: "published \(stream.id)")
        }
        await wait(seconds)
        for (id, counter) in counters.all {
            let turn = await session.statistics(id)?.throughTURN ?? false
            printer.print(["received": .string(id), "frames": .number(Double(counter.frames)), "keyframes": .number(Double(counter.keyframes)),
                           "bytes": .number(Double(counter.bytes)), "width": .number(Double(counter.width)), "height": .number(Double(counter.height)),
                           "through_turn": .bool(turn)],
                          line: "received \(id): \(counter.frames) frames, \(counter.keyframes) key frames, \(counter.bytes) bytes, \(counter.width)x\(counter.height)\(turn ? " through TURN" : "")")
        }
        await session.disconnect()
        printing.cancel()
        return finish()
    }

    static func name(_ e: VideoEvent) -> String {
        switch e {
        case .connected(let id): return "connected \(id)"
        case .connectionCreated(let c): return "connectionCreated \(c.id) \(c.data)"
        case .connectionDestroyed(let c, let r): return "connectionDestroyed \(c.id) \(r)"
        case .streamCreated(let s): return "streamCreated \(s.id) \(s.name)"
        case .streamDestroyed(let s, let r): return "streamDestroyed \(s.id) \(r)"
        case .streamPropertyChanged(let s, let p, let v): return "streamPropertyChanged \(s.id) \(p)=\(v)"
        case .signal(let t, let d, let f): return "signal \(t) \(d) from \(f ?? "server")"
        case .muteForced(let id): return "muteForced \(id)"
        case .captionReceived(let id, let text, let isFinal): return "caption \(id) \(isFinal ? "final" : "partial") \(text)"
        case .audioFallback(let id, let event): return "\(event.rawValue) \(id)"
        case .publisherAudioFallback(let id, let event, let send): return "publisher \(event?.rawValue ?? "videoTry") \(id) sendVideo=\(send)"
        case .unusedLayers(let id, let rids): return "unusedLayers \(id) \(rids.joined(separator: ","))"
        case .relay(let id, let subscriber, let message): return "relay \(id) \(subscriber) \(message)"
        case .reconnecting: return "reconnecting"
        case .reconnected(let id): return "reconnected \(id)"
        case .disconnected(let r): return "disconnected \(r)"
        case .error(let e): return "error \(e)"
        }
    }

    /// Stops the client's loop threads before the process exits (see `ClientLoops.shutdown`).
    static func finish() -> Int32 {
        ClientLoops.shutdown()
        return 0
    }

    static func wait(_ seconds: Double?) async {
        if let seconds {
            try? await Task.sleep(for: .seconds(seconds))
        } else {
            while true { try? await Task.sleep(for: .seconds(3600)) }
        }
    }
}

/// Prints one line per event, as text or as a JSON object.
struct EventPrinter: Sendable {
    let json: Bool
    func print(_ object: [String: JSONValue], line: String) {
        let text: String
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            text = (try? encoder.encode(JSONValue.object(object.filter { !$0.value.isNull }))).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        } else {
            text = line
        }
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}

/// Frame counters per subscribed stream.
final class CounterBox: Sendable {
    private let counters = Mutex<[(String, VideoFrameCounter)]>([])
    /// A new counter for stream `id`, or nil when the stream already has one (it was seen both in the
    /// session's streams at connect and in a `streamCreated` event).
    func claim(_ id: String) -> VideoFrameCounter? {
        counters.withLock { list in
            guard !list.contains(where: { $0.0 == id }) else { return nil }
            let counter = VideoFrameCounter()
            list.append((id, counter))
            return counter
        }
    }
    var all: [(String, VideoFrameCounter)] { counters.withLock { $0 } }
}
