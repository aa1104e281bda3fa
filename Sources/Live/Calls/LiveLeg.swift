import Foundation
import Platform
import Runtime
import Wire

/// One leg while it runs: its NCCO engine, its timers and the steps the engine asks for. Every change goes
/// through this actor, so a leg's statuses, webhooks and NCCO steps happen in one order.
actor LiveLeg {
    /// How the leg gets its NCCO once answered.
    enum Script: Sendable {
        case inline(NCCO)
        case answerURL(VoiceWebhooks.Target, payload: [(String, JSONValue)])
        /// A leg dialled by `connect`: it runs no NCCO, it is bridged to its parent.
        case bridgedTo(parent: String)
    }

    nonisolated let uuid: String
    private(set) var leg: CallLeg
    let application: Application
    let script: Script
    let eventTarget: VoiceWebhooks.Target?
    /// The user an `app` leg rings or belongs to.
    let user: User?
    unowned let calls: Calls
    var engine = NCCOEngine()
    var child: String?
    var ringTimer: Task<Void, Never>?
    var lengthTimer: Task<Void, Never>?
    var tickTimer: Task<Void, Never>?
    var endOnExit = false
    var scriptStarted = false
    /// How the last `connect` this leg dialled ended, when it was not answered.
    var lastDialStatus: CallStatus?
    /// Answering-machine detection asked for when the call was placed.
    let machineDetection: MachineDetection?
    /// Dialled by a synchronous `connect` (`eventType: synchronous`): the event of how it failed (or, for a
    /// websocket, that its far end `disconnected`) may be answered with an NCCO that replaces the rest of the
    /// parent's.
    let fallback: Bool
    /// Dialled by a `connect` whose phone endpoint has `onAnswer`: once answered, the NCCO at its URL runs on this
    /// leg, in a conversation of its own, and when it is done the leg moves into `joins` (the caller's) and is bridged.
    struct Whisper: Sendable {
        let onAnswer: NCCOAction.OnAnswer
        let joins: String
    }
    let whisper: Whisper?
    /// The whisper's NCCO is running.
    var whispering = false
    /// A synchronous detection holds the NCCO until its verdict (or beep).
    var awaitingDetection = false

    init(leg: CallLeg, application: Application, script: Script, eventTarget: VoiceWebhooks.Target?, user: User?, calls: Calls,
         machineDetection: MachineDetection? = nil, fallback: Bool = false, whisper: Whisper? = nil) {
        uuid = leg.uuid
        self.machineDetection = machineDetection
        self.fallback = fallback
        self.whisper = whisper
        self.leg = leg
        self.application = application
        self.script = script
        self.eventTarget = eventTarget
        self.user = user
        self.calls = calls
    }

    var now: Date { calls.core.clock.now() }

    // MARK: Life

    /// An outbound leg: ring the far end.
    func ring() {
        sendEvent(status: .started)
        ringTimer = Task { [weak self, ringing = leg.ringingTimer] in
            try? await Task.sleep(for: .seconds(ringing))
            guard !Task.isCancelled else { return }
            await self?.ringingTimedOut()
        }
        switch leg.to {
        case .app(let name):
            guard let user else { return end(.failed, reason: "no user named \(name)") }
            calls.clients?.push(userID: user.id, type: "call:invite", body: inviteBody())
            setStatus(.ringing)
        default:
            do {
                try calls.media.perform(.dial(leg.to, from: leg.from.address, leg: uuid), leg: uuid)
            } catch {
                end(.failed, reason: error.description)
            }
        }
    }

    /// An inbound leg: an app user's server call is answered at once; a phone's waits for its media to
    /// answer it (`answered` from media). Its NCCO runs either way.
    func arrive(answered: Bool = true) {
        sendEvent(status: .started)
        setStatus(.ringing)
        if answered { setStatus(.answered) }
        startScript()
    }

    func inviteBody() -> JSONValue {
        ["call_id": .string(uuid), "conversation_id": .string(leg.conversationID), "from": CallLeg.endpointJSON(leg.from),
         "channel_type": .string(leg.from.kind.rawValue), "direction": .string(leg.direction.rawValue)]
    }

    func ringingTimedOut() {
        guard leg.status == .started || leg.status == .ringing else { return }
        if let user { calls.clients?.push(userID: user.id, type: "call:invite:cancel", body: ["call_id": .string(uuid), "reason": "remoteTimeout"]) }
        end(.timeout)
    }

    /// The user answered on one of its sessions.
    func answer(by userID: String) throws(CallError) {
        guard user?.id == userID else { throw .notYours }
        guard leg.status == .ringing || leg.status == .started else { throw .wrongState("the call is not ringing") }
        ringTimer?.cancel()
        calls.clients?.push(userID: userID, type: "call:invite:cancel", body: ["call_id": .string(uuid), "reason": "answeredElsewhere"])
        answered()
    }

    func reject(by userID: String) throws(CallError) {
        guard user?.id == userID else { throw .notYours }
        guard leg.status == .ringing || leg.status == .started else { throw .wrongState("the call is not ringing") }
        calls.clients?.push(userID: userID, type: "call:invite:cancel", body: ["call_id": .string(uuid), "reason": "rejectedElsewhere"])
        end(.rejected)
    }

    /// The far end picked up.
    func answered() {
        ringTimer?.cancel()
        guard setStatus(.answered) else { return }
        lengthTimer = Task { [weak self, length = leg.lengthTimer] in
            try? await Task.sleep(for: .seconds(length))
            guard !Task.isCancelled else { return }
            await self?.hangup(reason: "length timer")
        }
        if !scriptStarted, let detection = machineDetection {
            do {
                try calls.media.perform(.detectMachine(beep: detection.listensForBeep, beepTimeout: detection.beepTimeout), leg: uuid)
                if detection.synchronous {
                    awaitingDetection = true
                    return
                }
            } catch {
                sendError("machine detection: \(error.description)", code: "machine-detection-failed")
            }
        }
        // An inbound phone call runs its NCCO while it rings; it is answered when the NCCO needs it.
        if !scriptStarted { startScript() }
    }

    /// A finding of machine detection: its event, then a hang-up (a machine, with `hangup`) or the NCCO a
    /// synchronous detection held (after the beep or its time-out for `detect_beep`).
    func machineDetected(_ result: MachineDetectionResult) {
        guard let detection = machineDetection, leg.status == .answered else { return }
        switch result {
        case .human:
            sendDetectionEvent("human", subState: nil)
        case .machine:
            sendDetectionEvent("machine", subState: nil)
            if detection.behavior == .hangup { return hangup(reason: "machine detected") }
            if detection.mode == .detectBeep { return }
        case .beep:
            sendDetectionEvent("machine", subState: "beep_start")
        case .beepTimeout:
            sendDetectionEvent("machine", subState: "beep_timeout")
        }
        if awaitingDetection {
            awaitingDetection = false
            startScript()
        }
    }

    func startScript() {
        scriptStarted = true
        switch script {
        case .inline(let ncco):
            run(engine.load(ncco, now: now))
        case .answerURL(let target, let payload):
            let fallback = application.voiceFallbackAnswer.map(VoiceWebhooks.Target.init)
            let (webhooks, app) = (calls.webhooks, application)
            Task { [weak self] in
                let result = await webhooks.answer(payload, answer: target, fallback: fallback, application: app)
                await self?.answerFetched(result)
            }
        case .bridgedTo(let parent):
            guard let whisper else { return joinParent(parent) }
            // The caller keeps waiting (its ringback plays on) while the whisper runs here.
            whispering = true
            Task { [calls] in await calls.leg(parent)?.calleeAnswered() }
            // Asked as the application's answer URL is (its method), with the answer webhook's payload for this leg.
            let method = application.voiceAnswer.map(VoiceWebhooks.Target.init)?.method ?? .GET
            let target = VoiceWebhooks.Target(url: whisper.onAnswer.url, method: method)
            let (webhooks, app, payload) = (calls.webhooks, application, Calls.answerPayload(leg, fromUser: nil, customData: nil))
            Task { [weak self] in
                let result = await webhooks.answer(payload, answer: target, fallback: nil, application: app)
                await self?.answerFetched(result)
            }
        }
    }

    /// Bridged to the leg whose `connect` dialled this one; after a whisper, moved into its conversation first.
    func joinParent(_ parent: String) {
        if let whisper {
            do {
                leg = try calls.core.calls.move(uuid: uuid, to: whisper.joins, user: user)
                try calls.media.perform(.bridge(conversationID: whisper.joins, NCCOAction.Conversation(name: whisper.joins)), leg: uuid)
            } catch {
                sendError("connect: the answered leg could not join the caller: \(error)", code: "conversation-failed")
                return hangup(reason: "join failed")
            }
        }
        Task { [calls] in await calls.leg(parent)?.dialAnswered() }
        // `dtmfAnswer`: keys for the answered phone (an extension, a PIN), `p` a 500 ms pause.
        if case .phone(_, let digits?, _) = leg.to { try? calls.media.perform(.sendDigits(digits), leg: uuid) }
    }

    func answerFetched(_ result: Result<JSONValue, VoiceWebhooks.AnswerFailure>) {
        guard !leg.status.isTerminal else { return }
        switch result {
        case .success(let document):
            run(engine.load(document, now: now))
        case .failure(let f):
            sendError("the answer URL gave no NCCO: \(f.description)", code: "answer-failed")
            end(.failed, reason: f.description)
        }
    }

    /// Ends the leg from outside (REST, the user, the length timer, a parent's hangup).
    func hangup(reason: String) {
        guard !leg.status.isTerminal else { return }
        if let user, reason != "localHangup" {
            calls.clients?.push(userID: user.id, type: leg.status == .answered ? "call:hangup" : "call:invite:cancel",
                                body: ["call_id": .string(uuid), "reason": leg.status == .answered ? "remoteHangup" : "remoteCancel"])
        }
        end(leg.status == .answered ? .completed : .cancelled)
    }

    // MARK: Engine

    func run(_ steps: [NCCOStep]) {
        for step in steps {
            guard !leg.status.isTerminal else { return }
            switch step {
            case .media(let command):
                do { try calls.media.perform(command, leg: uuid) } catch {
                    run(engine.mediaFailed("\(Self.actionName(command)): \(error.description)", now: now))
                }
            case .stopMedia:
                calls.media.stop(leg: uuid)
            case .joinConversation(let c):
                joinConversation(c)
            case .dial(let c):
                Task { [calls, uuid] in await calls.dial(c, parent: uuid) }
            case .request(let cb, let payload, let awaits):
                request(cb, payload: payload, awaits: awaits)
            case .error(let reason, let code):
                sendError(reason, code: code)
            case .hangup:
                // A whisper's NCCO ran out: the leg joins the caller instead of hanging up.
                if whispering, case .bridgedTo(let parent) = script {
                    whispering = false
                    joinParent(parent)
                } else {
                    end(.completed)
                }
            }
        }
        scheduleTick()
    }

    static func actionName(_ c: CallMediaCommand) -> String {
        switch c {
        case .say: "talk"
        case .play: "stream"
        case .collectDigits, .collectSpeech: "input"
        case .startRecording, .stopRecording: "record"
        case .sendDigits: "dtmf"
        case .bridge, .recordConversation: "conversation"
        case .dial: "connect"
        case .detectMachine: "machine_detection"
        }
    }

    func scheduleTick() {
        tickTimer?.cancel()
        guard let deadline = engine.deadline else { return }
        let wait = max(0, deadline.timeIntervalSince(now))
        tickTimer = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(Int(wait * 1000) + 5))
            guard !Task.isCancelled else { return }
            await self?.tick()
        }
    }

    func tick() async {
        let steps = engine.tick(now: now)
        if !steps.isEmpty, engine.phase != .bridged, let child {
            // A connect that was not answered in time: its leg stops ringing (and its user hears why) before
            // this NCCO moves on, so the conversation records the callee's `timeout` before whatever ends
            // the call; a caller learns why its call ended from that order. (`run` skips its steps if this
            // leg ended meanwhile.)
            self.child = nil
            lastDialStatus = .timeout
            await calls.leg(child)?.ringingTimedOut()
        }
        run(steps)
    }

    func joinConversation(_ c: NCCOAction.Conversation) {
        endOnExit = c.endOnExit
        do {
            let conversation = try calls.namedConversation(applicationID: application.id, name: c.name)
            if let user, leg.conversationID != conversation, case .app = (leg.direction == .outbound ? leg.to : leg.from) {
                // The user's client follows its leg: told before its member leaves the call's conversation.
                calls.clients?.push(userID: user.id, type: "call:transfer", body: [
                    "call_id": .string(uuid), "conversation_id": .string(conversation), "member_id": .string(leg.memberID)])
            }
            leg = try calls.core.calls.move(uuid: uuid, to: conversation, user: user)
            // An app leg's audio reaches the conversation through `rtc:*`; other legs need the mixer.
            if case .app = (leg.direction == .outbound ? leg.to : leg.from) {
                calls.media.appLegJoined(leg: uuid, conversationID: conversation, c)
            } else {
                try calls.media.perform(.bridge(conversationID: conversation, c), leg: uuid)
            }
            // Recorded from when a leg that starts it (not a waiting attendee) is in, until it empties; MP3, as Vonage's.
            if c.record && c.startOnEnter {
                var record = NCCOAction.Record()
                record.eventURL = c.eventURL
                try calls.media.perform(.recordConversation(record), leg: uuid)
            }
        } catch let e as CallMediaError {
            sendError("conversation: \(e.description)", code: "media-unavailable")
        } catch {
            sendError("conversation: \(error)", code: "conversation-failed")
        }
    }

    func request(_ cb: NCCOAction.Callback?, payload: [String: JSONValue], awaits: Bool) {
        let target = cb.map { VoiceWebhooks.Target(url: $0.url, method: $0.method == .get ? .GET : .POST) } ?? eventTarget
        var fields = legFields()
        fields += payload.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        guard let target else {
            if awaits { run(engine.callbackAnswered(nil, now: now)) }
            return
        }
        // Nothing waits on it (an asynchronous input's keys): in the leg's lane, in order with its other events.
        guard awaits else { return calls.webhooks.event(fields, to: target, application: application, lane: uuid) }
        let (webhooks, app) = (calls.webhooks, application)
        Task { [weak self] in
            let reply = await webhooks.callback(fields, to: target, application: app)
            guard awaits else { return }
            await self?.callbackReplied(try? reply.get())
        }
    }

    func callbackReplied(_ reply: JSONValue??) {
        guard !leg.status.isTerminal else { return }
        run(engine.callbackAnswered(reply ?? nil, now: now))
    }

    // MARK: From media and other legs

    func mediaFinished() { run(engine.mediaFinished(now: now)) }
    func recordingFinished() { run(engine.recordingFinished(now: now)) }
    func mediaFailed(_ reason: String) { run(engine.mediaFailed(reason, now: now)) }
    func digits(_ d: String) { run(engine.digits(d, now: now)) }
    func speechFinished(_ outcome: SpeechOutcome) { run(engine.speechFinished(outcome, now: now)) }
    func speechStarted() { run(engine.speechStarted(now: now)) }

    /// Sends the keys on to the leg this one is connected with (the `connect` it dialled, or the leg that
    /// dialled it), when that leg can carry them (a phone); a websocket shares the conversation and is told
    /// of them there (`CallMedia.keysPressed`), once.
    func forwardDigits(_ d: String) async {
        let other: String? = if case .bridgedTo(let parent) = script { parent } else if engine.phase == .bridged { child } else { nil }
        guard let other else { return }
        if let peer = calls.leg(other), await peer.currentLeg.to.kind == .websocket { return }
        try? calls.media.perform(.sendDigits(d), leg: other)
    }

    func dialStarted(child: String) { self.child = child }

    func dialAnswered() {
        calls.media.connected(leg: uuid)
        run(engine.dialAnswered(now: now))
    }

    /// The dialled leg answered and runs its whisper before it joins: the connect stops counting its timeout.
    func calleeAnswered() { engine.calleeAnswered() }

    /// The dialled leg ended: before answering it failed the connect, after it the bridge.
    /// `answer`: what the connect's event URL answered the dialled leg's status with (a synchronous connect).
    func childEnded(wasAnswered: Bool, status: CallStatus? = nil, answer: JSONValue? = nil) {
        child = nil
        if !wasAnswered { lastDialStatus = status }
        run(wasAnswered ? engine.bridgeEnded(now: now, answer: answer) : engine.dialFailed(now: now, answer: answer))
    }

    func conversationEnded() { run(engine.conversationEnded(now: now)) }

    /// A status from media for a dialled phone/sip/websocket leg.
    func mediaStatus(_ status: CallStatus, reason: String? = nil) {
        switch status {
        case .ringing: setStatus(.ringing)
        case .answered: answered()
        case let s where s.isTerminal: end(s, reason: s == .failed ? reason : nil)
        default: break
        }
    }

    // MARK: Status and events

    /// Stores a new status and sends its event; false when nothing changed. `replied` gets the event's reply
    /// (nil when there is none), or nil at once when no event was sent.
    @discardableResult
    func setStatus(_ status: CallStatus, reason: String? = nil, replied: (@Sendable (JSONValue?) -> Void)? = nil) -> Bool {
        guard let updated = try? calls.core.calls.setStatus(uuid: uuid, status) else {
            replied?(nil)
            return false
        }
        leg = updated
        sendEvent(status: status, reason: reason, replied: replied)
        return true
    }

    /// Ends the leg with a terminal status and lets go of everything it holds.
    func end(_ status: CallStatus, reason: String? = nil) {
        guard !leg.status.isTerminal else { return }
        _ = engine.stop()
        ringTimer?.cancel()
        lengthTimer?.cancel()
        tickTimer?.cancel()
        let wasAnswered = leg.answeredAt != nil
        var status = status
        if !wasAnswered, leg.direction == .inbound, status == .completed {
            // Never answered (a phone waiting on a connect nobody took): it ends as the connect did.
            status = lastDialStatus ?? .unanswered
        }
        // A websocket its application closed is `disconnected` only for a synchronous connect, as the Voice API's.
        if status == .disconnected, !fallback { status = .completed }
        if !wasAnswered { calls.media.declined(leg: uuid, status: status.rawValue) }
        let (calls, uuid, child, endOnExit, conversation, final) = (calls, uuid, child, endOnExit, leg.conversationID, status)
        let parent: String? = if case .bridgedTo(let p) = script { p } else { nil }
        let tell: @Sendable (JSONValue?) -> Void = { answer in
            Task {
                await calls.ended(uuid: uuid, status: final, parent: parent, child: child, wasAnswered: wasAnswered,
                                  endOnExitConversation: endOnExit ? conversation : nil, answer: answer)
            }
        }
        // A synchronous connect's parent waits for the connect's event URL to answer how this leg failed.
        let awaitsAnswer = fallback && parent != nil && (!wasAnswered || status == .disconnected)
        setStatus(status, reason: reason, replied: awaitsAnswer ? tell : nil)
        calls.media.release(leg: uuid)
        if !awaitsAnswer { tell(nil) }
    }

    func legFields() -> [(String, JSONValue)] {
        [("uuid", .string(uuid)), ("conversation_uuid", .string(leg.conversationID)), ("timestamp", .string(now.iso8601))]
    }

    func sendEvent(status: CallStatus, reason: String? = nil, replied: (@Sendable (JSONValue?) -> Void)? = nil) {
        guard let eventTarget else {
            replied?(nil)
            return
        }
        var p: [(String, JSONValue)] = [
            ("from", .string(leg.from.address)), ("to", .string(leg.to.address)), ("uuid", .string(uuid)),
            ("conversation_uuid", .string(leg.conversationID)), ("status", .string(status.rawValue)),
            ("direction", .string(leg.direction.rawValue)), ("timestamp", .string(now.iso8601)),
        ]
        if status == .completed || status.isTerminal {
            p += [("start_time", .string(leg.startTime.iso8601)), ("end_time", .string((leg.endTime ?? now).iso8601)),
                  ("duration", .string(String(leg.duration ?? 0))), ("rate", "0.00000000"), ("price", "0.00000000")]
            if let n = leg.network { p.append(("network", .string(n))) }
        }
        if let reason { p.append(("reason", .string(reason))) }
        // A websocket's `headers` come with its events, as the Voice API's (context for a fallback).
        if case .websocket(_, _, let headers, _) = leg.to, !headers.isEmpty { p.append(("headers", .object(headers.mapValues { .string($0) }))) }
        calls.webhooks.event(p, to: eventTarget, application: application, lane: uuid, replied: replied)
    }

    /// A machine detection event: `status` `human` or `machine`, with `sub_state` for a beep.
    func sendDetectionEvent(_ status: String, subState: String?) {
        guard let eventTarget else { return }
        var p: [(String, JSONValue)] = [
            ("from", .string(leg.from.address)), ("to", .string(leg.to.address)), ("uuid", .string(uuid)), ("call_uuid", .string(uuid)),
            ("conversation_uuid", .string(leg.conversationID)), ("status", .string(status)),
            ("direction", .string(leg.direction.rawValue)), ("timestamp", .string(now.iso8601)),
        ]
        if let subState { p.append(("sub_state", .string(subState))) }
        calls.webhooks.event(p, to: eventTarget, application: application, lane: uuid)
    }

    /// An error event: what went wrong, for the application's event URL.
    func sendError(_ reason: String, code: String) {
        guard let eventTarget else { return }
        let p: [(String, JSONValue)] = [("type", "error"), ("code", .string(code)), ("reason", .string(reason))] + legFields()
        calls.webhooks.event(p, to: eventTarget, application: application, lane: uuid)
    }

    // MARK: Live controls

    func muted(_ muted: Bool?, earmuffed: Bool?) throws {
        guard !leg.status.isTerminal else { throw CallError.notLive }
        guard leg.status == .answered else { throw CallError.wrongState("the call has not been answered") }
        let core = calls.core
        let current = try core.conversations.member(id: leg.memberID, conversationID: leg.conversationID, applicationID: application.id)
        var media = current.media
        if let muted { media.muted = muted }
        if let earmuffed { media.earmuffed = earmuffed }
        // Rooms follows the member's `member:media`: the leg's audio, whatever carries it, is muted or earmuffed.
        _ = try core.conversations.setMedia(memberID: leg.memberID, conversationID: leg.conversationID, applicationID: application.id, media: media)
    }

    func transfer(_ ncco: NCCO) throws(CallError) {
        guard !leg.status.isTerminal else { throw .notLive }
        guard leg.status == .answered else { throw .wrongState("the call has not been answered") }
        if let child { Task { [calls] in await calls.leg(child)?.hangup(reason: "transfer") } }
        child = nil
        sendTransferEvent()
        run(engine.load(ncco, now: now))
    }

    func transfer(to target: VoiceWebhooks.Target) throws(CallError) {
        guard !leg.status.isTerminal else { throw .notLive }
        guard leg.status == .answered else { throw .wrongState("the call has not been answered") }
        sendTransferEvent()
        let (webhooks, app) = (calls.webhooks, application)
        let payload: [(String, JSONValue)] = [("to", .string(leg.to.address)), ("from", .string(leg.from.address))] + legFields()
        _ = engine.stop()
        calls.media.stop(leg: uuid)
        Task { [weak self] in
            let result = await webhooks.answer(payload, answer: target, fallback: nil, application: app)
            await self?.transferFetched(result)
        }
    }

    func transferFetched(_ result: Result<JSONValue, VoiceWebhooks.AnswerFailure>) {
        engine = NCCOEngine()
        answerFetched(result)
    }

    func sendTransferEvent() {
        guard let eventTarget else { return }
        let p: [(String, JSONValue)] = [("type", "transfer"), ("conversation_uuid_from", .string(leg.conversationID)),
                                        ("conversation_uuid_to", .string(leg.conversationID))] + legFields()
        calls.webhooks.event(p, to: eventTarget, application: application, lane: uuid)
    }

    func perform(_ command: CallMediaCommand) throws(CallError) {
        guard !leg.status.isTerminal else { throw .notLive }
        do { try calls.media.perform(command, leg: uuid) } catch { throw .media(error) }
    }

    func listenForKeys(_ callback: NCCOAction.Callback?) throws(CallError) {
        guard !leg.status.isTerminal else { throw .notLive }
        engine.listenForKeys(callback)
    }

    func stopMedia() throws(CallError) {
        guard !leg.status.isTerminal else { throw .notLive }
        calls.media.stop(leg: uuid)
    }

    var ownerUserID: String? { user?.id }
    var currentLeg: CallLeg { leg }
}

extension CallLeg {
    /// An endpoint for realtime pushes: `{type, number | uri | user}`.
    static func endpointJSON(_ e: CallEndpoint) -> JSONValue {
        switch e {
        case .phone(let n, _, _): ["type": "phone", "number": .string(n)]
        case .sip(let u, _, _): ["type": "sip", "uri": .string(u)]
        case .app(let u): ["type": "app", "user": .string(u)]
        case .websocket(let u, _, _, _): ["type": "websocket", "uri": .string(u)]
        }
    }
}
