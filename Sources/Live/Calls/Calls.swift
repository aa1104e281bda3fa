import Foundation
import Platform
import Runtime
import Synchronization
import Wire

/// Calls in progress: places, answers and ends legs, runs their NCCOs and reports to their webhooks.
/// The REST API, the realtime gateway and media all act on calls through this one object.
public final class Calls: CallMediaEvents, Sendable {
    let core: PlatformCore
    let webhooks: VoiceWebhooks
    let media: any CallMedia
    private let clientsBox = Mutex<(any CallClients)?>(nil)
    private let live = Mutex<[String: LiveLeg]>([:])

    public init(core: PlatformCore, webhooks: VoiceWebhooks, media: any CallMedia = NoCallMedia()) {
        self.core = core
        self.webhooks = webhooks
        self.media = media
    }

    var clients: (any CallClients)? { clientsBox.withLock { $0 } }

    /// Where invites and hangups for app users go; set once the realtime gateway exists.
    public func attach(clients: any CallClients) { clientsBox.withLock { $0 = clients } }

    /// Legs running now.
    public var activeCount: Int { live.withLock { $0.count } }

    func leg(_ uuid: String) -> LiveLeg? { live.withLock { $0[uuid] } }

    /// The running leg of the application, or why it cannot be acted on.
    func running(_ uuid: String, applicationID: String) throws -> LiveLeg {
        _ = try core.calls.get(uuid: uuid, applicationID: applicationID)
        guard let l = leg(uuid) else { throw CallError.notLive }
        return l
    }

    // MARK: Placing calls

    /// `POST /v1/calls`: what the request asked for.
    public struct Placement: Sendable {
        public var application: Application
        public var to: CallEndpoint
        public var from: CallEndpoint
        public var ncco: NCCO?
        public var answer: VoiceWebhooks.Target?
        public var event: VoiceWebhooks.Target?
        public var ringingTimer = 60
        public var lengthTimer = 7200
        /// `machine_detection` / `advanced_machine_detection` (a phone or SIP `to` only).
        public var machineDetection: MachineDetection?

        public init(application: Application, to: CallEndpoint, from: CallEndpoint, ncco: NCCO?, answer: VoiceWebhooks.Target?) {
            self.application = application
            self.to = to
            self.from = from
            self.ncco = ncco
            self.answer = answer
        }
    }

    /// Places an outbound leg; it is stored (and survives a restart) before this returns.
    public func place(_ p: Placement) throws -> CallLeg {
        var user: User?
        if case .app(let name) = p.to {
            guard let u = try core.users.resolve(name, applicationID: p.application.id) else {
                throw PlatformError.invalid("to: the application has no user named '\(name)'.")
            }
            user = u
        }
        let leg = try core.calls.create(CallLegs.NewLeg(applicationID: p.application.id, direction: .outbound, from: p.from, to: p.to,
                                                        ringingTimer: p.ringingTimer, lengthTimer: p.lengthTimer, user: user))
        let script: LiveLeg.Script
        if let ncco = p.ncco {
            script = .inline(ncco)
        } else {
            let target = p.answer ?? p.application.voiceAnswer.map(VoiceWebhooks.Target.init)
            guard let target else { throw PlatformError.invalid("answer_url or ncco is required (the application has no answer_url).") }
            script = .answerURL(target, payload: Self.answerPayload(leg, fromUser: nil, customData: nil))
        }
        let runner = LiveLeg(leg: leg, application: p.application, script: script,
                             eventTarget: p.event ?? p.application.voiceEvent.map(VoiceWebhooks.Target.init), user: user, calls: self,
                             machineDetection: p.machineDetection)
        live.withLock { $0[leg.uuid] = runner }
        Task { await runner.ring() }
        return leg
    }

    /// A call an app user places from a client (`call:create`): an inbound leg whose NCCO comes from the
    /// application's answer URL, with `from_user` and `custom_data`. It is answered (its member joined, so
    /// the client can publish at once) before this returns; the NCCO runs on.
    public func serverCall(application: Application, user: User, to: String, customData: JSONValue?) async throws -> CallLeg {
        guard let answer = application.voiceAnswer.map(VoiceWebhooks.Target.init) else {
            throw PlatformError.invalid("The application has no voice answer_url.")
        }
        let callee: CallEndpoint = CallEndpoint.normalizedNumber(to).map { .phone(number: $0, dtmfAnswer: nil) } ?? .app(user: to)
        let leg = try core.calls.create(CallLegs.NewLeg(applicationID: application.id, direction: .inbound, from: .app(user: user.name),
                                                        to: callee, user: user))
        var payload = Self.answerPayload(leg, fromUser: user.name, customData: customData)
        // The client's `to` is passed as given (a number keeps the form the client used).
        if let i = payload.firstIndex(where: { $0.0 == "to" }) { payload[i].1 = .string(to) }
        let runner = LiveLeg(leg: leg, application: application, script: .answerURL(answer, payload: payload),
                             eventTarget: application.voiceEvent.map(VoiceWebhooks.Target.init), user: user, calls: self)
        live.withLock { $0[leg.uuid] = runner }
        await runner.arrive()
        return (try? core.calls.get(uuid: leg.uuid)) ?? leg
    }

    /// A call from a phone (a SIP INVITE to a number the application owns): an inbound leg whose NCCO
    /// comes from the application's answer URL. The leg waits for `start` (its line is in the mix, the
    /// phone hears ringing); it is answered when its NCCO first needs the audio (a talk, a stream, an
    /// input, a record, a conversation) or a `connect` it dialled is answered, and declined with the
    /// connect's outcome when neither happens (`CallMedia.connected`, `declined`, media's `answered`).
    public func incoming(application: Application, from: CallEndpoint, to: CallEndpoint, sipHeaders: [String: String] = [:]) throws -> CallLeg {
        guard let answer = application.voiceAnswer.map(VoiceWebhooks.Target.init) else {
            throw PlatformError.invalid("The application has no voice answer_url.")
        }
        let leg = try core.calls.create(CallLegs.NewLeg(applicationID: application.id, direction: .inbound, from: from, to: to))
        var payload = Self.answerPayload(leg, fromUser: nil, customData: nil)
        for (k, v) in sipHeaders.sorted(by: { $0.key < $1.key }) where k.hasPrefix("X-") { payload.append(("SipHeader_\(k)", .string(v))) }
        let runner = LiveLeg(leg: leg, application: application, script: .answerURL(answer, payload: payload),
                             eventTarget: application.voiceEvent.map(VoiceWebhooks.Target.init), user: nil, calls: self)
        live.withLock { $0[leg.uuid] = runner }
        return leg
    }

    /// Starts an `incoming` leg: started and ringing, then its NCCO (the answer comes from media).
    public func start(uuid: String) async {
        await leg(uuid)?.arrive(answered: false)
    }

    /// The answer webhook's parameters, in the documented order.
    static func answerPayload(_ leg: CallLeg, fromUser: String?, customData: JSONValue?) -> [(String, JSONValue)] {
        var p: [(String, JSONValue)] = [("to", .string(leg.to.address)), ("from", .string(leg.from.address))]
        if let fromUser { p.append(("from_user", .string(fromUser))) }
        p += [("uuid", .string(leg.uuid)), ("conversation_uuid", .string(leg.conversationID)), ("region_url", .string(""))]
        if let customData { p.append(("custom_data", customData)) }
        if case .sip(_, let headers, _) = leg.to {
            for (k, v) in headers.sorted(by: { $0.key < $1.key }) where k.hasPrefix("X-") { p.append(("SipHeader_\(k)", .string(v))) }
        }
        return p
    }

    /// `connect`: places the dialled leg in the parent's conversation and reports back to the parent.
    func dial(_ c: NCCOAction.Connect, parent uuid: String) async {
        guard let parent = leg(uuid) else { return }
        let parentLeg = await parent.currentLeg
        let app = parent.application
        var user: User?
        if case .app(let name) = c.endpoint { user = try? core.users.resolve(name, applicationID: app.id) }
        // `randomFromNumber`: one of the application's numbers; else the caller's side of the parent leg.
        let random = c.randomFromNumber ? (try? core.numbers.list(apiKey: app.apiKey, applicationID: app.id).randomElement()?.msisdn) ?? nil : nil
        let from: CallEndpoint = (c.from ?? random).map { .phone(number: $0, dtmfAnswer: nil) }
            ?? (parentLeg.direction == .inbound ? parentLeg.from : parentLeg.to)
        // With `onAnswer`, the leg hears its whisper in a conversation of its own (a new one), then joins the caller's.
        let whisper = c.onAnswer.map { LiveLeg.Whisper(onAnswer: $0, joins: parentLeg.conversationID) }
        guard let child = try? core.calls.create(CallLegs.NewLeg(applicationID: app.id, direction: .outbound, from: from, to: c.endpoint,
                                                                 conversationID: whisper == nil ? parentLeg.conversationID : nil, parentUUID: uuid,
                                                                 ringingTimer: c.timeout, lengthTimer: c.limit, user: user)) else {
            await parent.childEnded(wasAnswered: false)
            return
        }
        let event = c.eventURL.map { VoiceWebhooks.Target(url: $0.url, method: $0.method == .get ? .GET : .POST) } ?? parent.eventTarget
        let runner = LiveLeg(leg: child, application: app, script: .bridgedTo(parent: uuid), eventTarget: event, user: user, calls: self,
                             machineDetection: c.machineDetection, fallback: c.synchronous, whisper: whisper)
        live.withLock { $0[child.uuid] = runner }
        await parent.dialStarted(child: child.uuid)
        await runner.ring()
    }

    /// A leg has ended: the legs tied to it hear of it.
    /// `answer`: what a synchronous connect's event URL answered the leg's status with, for its parent.
    func ended(uuid: String, status: CallStatus, parent: String?, child: String?, wasAnswered: Bool, endOnExitConversation: String?,
               answer: JSONValue? = nil) async {
        _ = live.withLock { $0.removeValue(forKey: uuid) }
        if let parent, let p = leg(parent) { await p.childEnded(wasAnswered: wasAnswered, status: status, answer: answer) }
        if let child, let c = leg(child) { await c.hangup(reason: "parent ended") }
        if let conversation = endOnExitConversation {
            for other in (try? core.calls.legs(inConversation: conversation)) ?? [] where !other.status.isTerminal {
                await leg(other.uuid)?.conversationEnded()
            }
        }
    }

    /// The application's conversation of this name, made when it does not exist yet.
    func namedConversation(applicationID: String, name: String) throws -> String {
        if let existing = try core.conversations.find(name: name, applicationID: applicationID) { return existing.id }
        do {
            return try core.conversations.create(applicationID: applicationID, input: ResourceInput(name: name)).id
        } catch PlatformError.conflict {
            // Made meanwhile by another leg.
            guard let c = try core.conversations.find(name: name, applicationID: applicationID) else { throw PlatformError.notFound("conversation") }
            return c.id
        }
    }

    // MARK: Acting on live calls

    public func hangup(uuid: String, applicationID: String) async throws {
        try await running(uuid, applicationID: applicationID).hangup(reason: "api")
    }

    public func setMedia(uuid: String, applicationID: String, muted: Bool? = nil, earmuffed: Bool? = nil) async throws {
        try await running(uuid, applicationID: applicationID).muted(muted, earmuffed: earmuffed)
    }

    /// Replaces the leg's NCCO with `ncco` (validated whole by its parser).
    public func transfer(uuid: String, applicationID: String, ncco: NCCO) async throws {
        try await running(uuid, applicationID: applicationID).transfer(ncco)
    }

    public func transfer(uuid: String, applicationID: String, to target: VoiceWebhooks.Target) async throws {
        try await running(uuid, applicationID: applicationID).transfer(to: target)
    }

    /// Media into a live call (`PUT …/talk`, `…/stream`, `…/dtmf`).
    public func perform(_ command: CallMediaCommand, uuid: String, applicationID: String) async throws {
        try await running(uuid, applicationID: applicationID).perform(command)
    }

    public func stopMedia(uuid: String, applicationID: String) async throws {
        try await running(uuid, applicationID: applicationID).stopMedia()
    }

    /// Where an asynchronous input's keys go from now on (`PUT /v1/calls/{uuid}/input/dtmf`); nil: back to the input's
    /// own event URL (`DELETE`).
    public func listenForKeys(uuid: String, applicationID: String, url: String?) async throws {
        try await running(uuid, applicationID: applicationID).listenForKeys(url.map { NCCOAction.Callback(url: $0) })
    }

    // MARK: In-app voice

    public func answer(uuid: String, user: User) async throws {
        guard let l = leg(uuid) else { throw CallError.notLive }
        try await l.answer(by: user.id)
    }

    public func reject(uuid: String, user: User) async throws {
        guard let l = leg(uuid) else { throw CallError.notLive }
        try await l.reject(by: user.id)
    }

    /// The user hangs up its own leg.
    public func hangup(uuid: String, user: User) async throws {
        guard let l = leg(uuid) else { throw CallError.notLive }
        guard await l.ownerUserID == user.id else { throw CallError.notYours }
        await l.hangup(reason: "localHangup")
    }

    /// The user's own live leg, to take its audio up again after the client lost it (`call:reconnect`):
    /// the leg as it is now, with the conversation its audio meets in.
    public func reconnect(uuid: String, user: User) async throws -> CallLeg {
        guard let l = leg(uuid) else { throw CallError.notLive }
        guard await l.ownerUserID == user.id else { throw CallError.notYours }
        return await l.leg
    }

    public func setMedia(uuid: String, user: User, muted: Bool?, earmuffed: Bool?) async throws {
        guard let l = leg(uuid) else { throw CallError.notLive }
        guard await l.ownerUserID == user.id else { throw CallError.notYours }
        try await l.muted(muted, earmuffed: earmuffed)
    }

    /// DTMF the user's client sends into its own leg: the leg's NCCO hears it (an `input` collects it), and
    /// the leg it is connected to gets it (a phone as RFC 4733 events: menus on the far end work).
    public func digits(uuid: String, user: User, digits: String) async throws {
        guard let l = leg(uuid) else { throw CallError.notLive }
        guard await l.ownerUserID == user.id else { throw CallError.notYours }
        await l.digits(digits)
        media.keysPressed(digits, leg: uuid)
        await l.forwardDigits(digits)
    }

    // MARK: CallMediaEvents

    public func mediaFinished(leg uuid: String) {
        guard let l = leg(uuid) else { return }
        Task { await l.mediaFinished() }
    }

    /// Keys a phone or SIP leg's far end pressed: the leg's NCCO hears them, the websockets in its conversation
    /// are told, and a phone it is connected to gets them as RFC 4733 events.
    public func digits(_ digits: String, leg uuid: String) {
        guard let l = leg(uuid) else { return }
        media.keysPressed(digits, leg: uuid)
        Task {
            await l.digits(digits)
            await l.forwardDigits(digits)
        }
    }

    public func recordingFinished(leg uuid: String, record: NCCOAction.Record, fields: [String: JSONValue]) {
        let eventURL = record.eventURL
        if let l = leg(uuid) {
            Task {
                await l.request(eventURL, payload: fields, awaits: false)
                if record.isSynchronous { await l.recordingFinished() }
            }
            return
        }
        // Most recordings end with their call: the leg is gone, its application and event URL are in the store.
        guard let ended = try? core.calls.get(uuid: uuid), let app = try? core.applications.get(id: ended.applicationID),
              let target = eventURL.map({ VoiceWebhooks.Target(url: $0.url, method: $0.method == .get ? .GET : .POST) })
                ?? app.voiceEvent.map(VoiceWebhooks.Target.init) else { return }
        let payload: [(String, JSONValue)] = [("uuid", .string(uuid)), ("conversation_uuid", .string(ended.conversationID)),
                                              ("timestamp", .string(core.clock.now().iso8601))] + fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        webhooks.event(payload, to: target, application: app, lane: uuid)
    }

    public func recordingFailed(leg uuid: String, record: NCCOAction.Record, reason: String) {
        guard let l = leg(uuid) else { return }
        Task { await l.mediaFailed("record: \(reason)") }
    }

    public func speechStarted(leg uuid: String) {
        guard let l = leg(uuid) else { return }
        Task { await l.speechStarted() }
    }

    public func speechFinished(_ outcome: SpeechOutcome, leg uuid: String) {
        guard let l = leg(uuid) else { return }
        Task { await l.speechFinished(outcome) }
    }

    public func machineDetection(_ result: MachineDetectionResult, leg uuid: String) {
        guard let l = leg(uuid) else { return }
        Task { await l.machineDetected(result) }
    }

    public func dialStatus(_ status: String, reason: String?, leg uuid: String) {
        guard let l = leg(uuid), let s = CallStatus(rawValue: status) else { return }
        Task { await l.mediaStatus(s, reason: reason) }
    }
}
