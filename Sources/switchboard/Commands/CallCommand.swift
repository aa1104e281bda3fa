import Foundation
import SwitchboardClient
import Wire

/// `switchboard client call`: places a server call (or answers one) as an app user through the SDK
/// and prints the call's events until it ends.
enum CallCommand {
    static func run(_ args: Arguments, server: URL, seconds: Double?, printer: EventPrinter) async throws -> Int32 {
        let name = try args.require("--as")
        let answering = args.flag("--answer")
        let positionals = args.positionals
        guard answering ? positionals.count == 1 : positionals.count == 2 else {
            throw CLIError("expected 'client call NUMBER|USER --as NAME' or 'client call --answer --as NAME'")
        }
        var context: [String: JSONValue] = [:]
        if let text = args["--context"] {
            guard case .object(let o)? = try? JSONParser.parse(text) else { throw CLIError("--context: expected a JSON object") }
            context = o
        }
        let dtmf = args["--dtmf"]
        if let dtmf, dtmf.isEmpty || !dtmf.allSatisfy({ "0123456789*#".contains($0) }) { throw CLIError("--dtmf: digits 0-9, * and #") }
        let token: String
        if let given = args["--token"] {
            token = given
        } else {
            let app = RoomsAppServer(url: URL(string: args["--app"] ?? server.absoluteString + "/rooms/api") ?? server)
            token = try await app.logIn(name: name).token
        }
        let source = try ClientCommand.source(args["--play"])
        let recorder = args["--record"].map { WAVRecorder(path: $0) }
        let session = try await Session.connect(to: server, token: token, options: try ClientCommand.sessionOptions(args))
        let voice = session.voice
        var media: RoomMedia?
        /// The call's audio, once there is a conversation to send it into (with --play or --record). A call the
        /// server has already moved is refused in its old conversation (`notJoined`): its transfer follows.
        func startMedia(_ conversationID: String, moved: Bool = false) async throws {
            guard media == nil, source != nil || recorder != nil, !conversationID.isEmpty else { return }
            do {
                media = try await moved ? voice.followTransfer(into: conversationID, source: source, sink: recorder)
                    : voice.enableMedia(inCallConversation: conversationID, source: source, sink: recorder)
            } catch {
                guard !moved, case .server(let code, _) = error, code == "notJoined" else { throw error }
                return
            }
            printer.print(["event": "media", "conversation_id": .string(conversationID)], line: "audio on in \(conversationID)")
        }
        let events = voice.events()
        let deadline = seconds.map { ContinuousClock.now + .seconds($0) }

        var call: CallID?
        var answered = false
        var ended = false
        if !answering {
            let placed = try await voice.place(to: positionals[1], context: context)
            let id = placed.callID
            call = id
            printer.print(["event": "placed", "call_id": .string(id.rawValue), "to": .string(positionals[1])], line: "placed \(id) to \(positionals[1])")
            try await startMedia(placed.conversationID)
        } else {
            printer.print(["event": "waiting", "user": .string(name)], line: "waiting for a call to \(name)")
        }
        // The call's events, and a nil every 100 ms so the deadline is checked while nothing happens.
        let (input, feed) = AsyncStream<CallEvent?>.makeStream(bufferingPolicy: .unbounded)
        let forward = Task {
            for await e in events { feed.yield(e) }
            feed.finish()
        }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(100))
                feed.yield(nil)
            }
        }
        loop: for await event in input {
            if let deadline, ContinuousClock.now >= deadline { break }
            guard let event else { continue }
            print(event, printer)
            switch event {
            case .invite(let invite) where answering && call == nil:
                call = invite.callID
                try await voice.answer(invite.callID)
                answered = true
                printer.print(["event": "answered", "call_id": .string(invite.callID.rawValue)], line: "answered \(invite.callID)")
                try await startMedia(invite.conversationID)
                if let dtmf { try await voice.sendDTMF(dtmf, call: invite.callID) }
            case .legStatus(let update) where !answering && update.legID != call && update.status == .answered && !answered:
                answered = true
                if let dtmf, let call { try await voice.sendDTMF(dtmf, call: call) }
            case .transferred(let id, let conversation) where id == call:
                await media?.disable()
                media = nil
                try await startMedia(conversation, moved: true)
            case .hangup(let id, _) where id == call:
                ended = true
                break loop
            case .inviteCancelled(let id, _) where id == call && !answered:
                ended = true
                break loop
            default:
                break
            }
        }
        ticker.cancel()
        forward.cancel()
        if !ended, let call {
            try? await voice.hangup(call)
            printer.print(["event": "call:hangup", "call_id": .string(call.rawValue), "reason": "localHangup"], line: "hangup \(call): localHangup")
        }
        await media?.disable()
        try recorder?.finish()
        await session.logout()
        return ClientCommand.finish()
    }

    static func print(_ e: CallEvent, _ printer: EventPrinter) {
        switch e {
        case .invite(let i):
            printer.print(["event": "call:invite", "call_id": .string(i.callID.rawValue), "from": .string(i.from), "from_type": .string(i.fromType)],
                          line: "invite \(i.callID) from \(i.fromType):\(i.from)")
        case .inviteCancelled(let id, let reason):
            printer.print(["event": "call:invite:cancel", "call_id": .string(id.rawValue), "reason": .string(reason.wireName)],
                          line: "invite \(id) cancelled: \(reason.wireName)")
        case .hangup(let id, let reason):
            printer.print(["event": "call:hangup", "call_id": .string(id.rawValue), "reason": .string(reason.wireName)],
                          line: "hangup \(id): \(reason.wireName)")
        case .transferred(let id, let conversation):
            printer.print(["event": "call:transfer", "call_id": .string(id.rawValue), "conversation_id": .string(conversation)],
                          line: "call \(id) moved to \(conversation)")
        case .legStatus(let u):
            printer.print(["event": "leg:status", "leg_id": .string(u.legID.rawValue), "status": .string(u.status.rawValue),
                           "direction": .string(u.direction), "channel": .string(u.channelType)],
                          line: "leg \(u.legID) \(u.direction) \(u.channelType): \(u.status.rawValue)")
        }
    }
}
