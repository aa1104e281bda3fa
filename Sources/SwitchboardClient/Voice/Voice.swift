import Synchronization
import Wire

/// In-app voice for a session's user (docs/protocol.md, "Voice calls"): place server calls, answer or
/// reject invites, hang up, mute, earmuff and send DTMF on the realtime socket, and follow the user's
/// calls as `CallEvent`s.
///
/// ```swift
/// let call = try await session.voice.serverCall(to: "bob", context: ["reason": "standup"])
/// for await event in session.voice.events() { print(event) }
/// ```
public struct Voice: Sendable {
    let session: Session

    init(session: Session) { self.session = session }

    /// Places a call through the application: its answer URL gets `to`, the user as `from_user` and
    /// `context` as `custom_data`, and the NCCO it returns runs (a `connect` rings the callee).
    /// - Returns: the id of the user's leg.
    @discardableResult
    public func serverCall(to: String, context: [String: JSONValue] = [:]) async throws(SessionError) -> CallID {
        try await place(to: to, context: context).callID
    }

    /// A call this user placed: its leg, and the conversation the call's audio meets in.
    public struct PlacedCall: Sendable, Hashable {
        public var callID: CallID
        public var conversationID: String
    }

    /// `serverCall`, also returning the call's conversation, where `Session.enableMedia` (or
    /// `enableMedia(for:)`) sends and receives the call's audio.
    public func place(to: String, context: [String: JSONValue] = [:]) async throws(SessionError) -> PlacedCall {
        var body: [String: JSONValue] = ["to": .string(to)]
        if !context.isEmpty { body["custom_data"] = .object(context) }
        let answer = try await session.request("call:create", body)
        guard let id = answer["call_id"]?.stringValue else { throw .server(code: "invalid-response", detail: "no call_id") }
        let call = CallID(id)
        session.voiceLedger.withLock { $0.remember(call, in: \.placed) }
        return PlacedCall(callID: call, conversationID: answer["conversation_id"]?.stringValue ?? "")
    }

    /// Turns on the audio of a call (placed, or an answered invite's `conversationID`): publishes `source`
    /// and plays what the others say (a phone through the mixer, another app user) into `sink`.
    public func enableMedia(inCallConversation conversationID: String, source: AudioSource?, sink: AudioSink?) async throws(SessionError) -> RoomMedia {
        try await session.enableMedia(in: conversationID, source: source, sink: sink)
    }

    /// Turns the call's audio on in the conversation a `CallEvent.transferred` names (turn the old `RoomMedia`
    /// off first). The server tells of the move as it makes it, so the user's member there may be a moment
    /// behind: `notJoined` is tried again for up to 3 s.
    public func followTransfer(into conversationID: String, source: AudioSource?, sink: AudioSink?) async throws(SessionError) -> RoomMedia {
        var attempts = 1
        while true {
            do {
                return try await session.enableMedia(in: conversationID, source: source, sink: sink)
            } catch .server(let code, _) where code == "notJoined" && attempts < 30 {
                attempts += 1
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Takes up a live call of this user again (`call:reconnect`), e.g. after the app restarted with a
    /// new session: the call's events reach `events()` again and its audio is turned on as with
    /// `enableMedia(inCallConversation:)`. Fails with `callNotLive` once the call has ended.
    public func reconnect(_ call: CallID, source: AudioSource?, sink: AudioSink?) async throws(SessionError) -> RoomMedia {
        let reply = try await session.request("call:reconnect", ["call_id": .string(call.rawValue)])
        guard let conversation = reply["conversation_id"]?.stringValue else { throw .server(code: "invalid-response", detail: "no conversation_id") }
        session.voiceLedger.withLock { $0.remember(call, in: \.placed) }
        return try await session.enableMedia(in: conversation, source: source, sink: sink)
    }

    /// Answers an invite; the user's other sessions hear `answeredElsewhere`.
    public func answer(_ call: CallID) async throws(SessionError) {
        session.voiceLedger.withLock { $0.remember(call, in: \.answered) }
        do {
            try await session.request("call:answer", ["call_id": .string(call.rawValue)])
        } catch {
            session.voiceLedger.withLock { _ = $0.answered.remove(call) }
            throw error
        }
    }

    /// Rejects an invite; the caller's leg hears it as a rejection.
    public func reject(_ call: CallID) async throws(SessionError) {
        try await session.request("call:reject", ["call_id": .string(call.rawValue)])
    }

    /// Ends the user's leg of the call; every call event stream of the session reports `.localHangup`.
    public func hangup(_ call: CallID) async throws(SessionError) {
        session.voiceLedger.withLock { $0.remember(call, in: \.hangingUp) }
        do {
            try await session.request("call:hangup", ["call_id": .string(call.rawValue)])
        } catch {
            session.voiceLedger.withLock { _ = $0.hangingUp.remove(call) }
            throw error
        }
        session.deliverPush(["type": "call:hangup", "body": ["call_id": .string(call.rawValue), "reason": "localHangup"]], type: "call:hangup")
    }

    /// Stops (or restarts) sending the user's audio into the answered call.
    public func setMuted(_ muted: Bool, call: CallID) async throws(SessionError) {
        try await session.request("call:mute", ["call_id": .string(call.rawValue), "muted": .bool(muted)])
    }

    /// Stops (or restarts) the user hearing the answered call.
    public func setEarmuffed(_ earmuffed: Bool, call: CallID) async throws(SessionError) {
        try await session.request("call:earmuff", ["call_id": .string(call.rawValue), "earmuffed": .bool(earmuffed)])
    }

    /// Sends DTMF digits (0-9, *, #) into the user's leg; its NCCO (an `input`) hears them.
    public func sendDTMF(_ digits: String, call: CallID) async throws(SessionError) {
        try await session.request("call:dtmf", ["call_id": .string(call.rawValue), "digits": .string(digits)])
    }

    /// The user's call events from now on: invites, cancelled invites, hangups with their reason, and
    /// the status of every leg of the user's calls. Each call makes a new stream.
    public func events() -> AsyncStream<CallEvent> {
        let (stream, continuation) = AsyncStream<CallEvent>.makeStream(bufferingPolicy: .unbounded)
        let feed = CallEventFeed(continuation)
        let session = session
        // One stream of both, so the tracker sees them in the socket's order.
        let inputs = session.callInputs()
        let reader = Task {
            for await input in inputs {
                switch input {
                case .push(let message):
                    feed.push(message, ledger: session.voiceLedger.withLock { $0 })
                case .event(let event) where event.type == "leg:status:update" || event.type == "member:left":
                    feed.event(event, ledger: session.voiceLedger.withLock { $0 })
                case .event:
                    break
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in reader.cancel() }
        return stream
    }
}

extension Session {
    /// In-app voice calls of the session's user.
    public var voice: Voice { Voice(session: self) }
}
