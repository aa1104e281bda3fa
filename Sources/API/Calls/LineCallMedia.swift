import Audio
import Crypto
import Foundation
import Live
import Media
import Platform
import Runtime
import Synchronization
import Telephony
import Wire

/// Calls' media for legs whose audio is not WebRTC, each a line in its conversation's mix (so a phone,
/// a browser and the NCCO's talk, stream and record meet in one mixer): `connect` to a phone (through
/// the trunk that owns the caller's number) or a registered SIP device and inbound INVITEs to an
/// application's number, over the SIP edge; `connect` to a `websocket` (L16 both ways). Everything
/// else goes to the mixer's `MixerCallMedia`.
///
/// SIP statuses become leg statuses (`ringing`, `answered`, `busy`, `rejected`, `timeout`, `failed`,
/// `cancelled`, `completed`) through `CallMediaEvents.dialStatus`; DTMF from the phone (RFC 4733)
/// through `digits`.
final class LineCallMedia: CallMedia, IncomingCallHandler {
    /// A leg as the conversation policy sees it: where it is and the NCCO `conversation` action that put it
    /// there (set by the leg's NCCO, read by the policy's runs, so behind a lock). Mute and earmuff are the
    /// member's own (`member:media`), which `Rooms` follows.
    private class Attendee: @unchecked Sendable {
        struct State {
            let uuid: String
            var place: MixerCallMedia.LegPlace
            var conversation: NCCOAction.Conversation?
        }
        let uuid: String
        let state: Mutex<State>
        init(uuid: String, place: MixerCallMedia.LegPlace, conversation: NCCOAction.Conversation? = nil) {
            self.uuid = uuid
            state = Mutex(State(uuid: uuid, place: place, conversation: conversation))
        }
        var place: MixerCallMedia.LegPlace {
            get { state.withLock { $0.place } }
            set { state.withLock { $0.place = newValue } }
        }
        var snapshot: State { state.withLock { $0 } }
    }

    /// A phone or websocket leg in progress: its call, its line once the mixer has it.
    private final class PhoneLeg: Attendee, @unchecked Sendable {
        /// Hangs the SIP call up (CANCEL, BYE or a final response, whichever fits).
        var hangup: @Sendable () -> Void = {}
        /// Confined to the line's loop once set.
        let line = Mutex<PhoneLine?>(nil)
        var answered = false
        /// An inbound call still ringing: sends the 200 OK (once), or refuses the call with a status.
        var answer: (@Sendable () -> Void)?
        var refuse: (@Sendable (Int) -> Void)?
        /// Sends a key in a SIP INFO, for a trunk whose keys go in the signalling (`dtmf: info`).
        var sendKey: (@Sendable (Character) -> Void)?
        /// A websocket leg's socket, whose line the mixer makes.
        let socket: WebSocketLine.Holder?

        init(uuid: String, place: MixerCallMedia.LegPlace, socket: WebSocketLine.Holder? = nil) {
            self.socket = socket
            super.init(uuid: uuid, place: place)
        }
        /// Counts the leg's speech inputs: a result is reported only while its input is the current one
        /// (`stop(leg:)` moves it on, so a result that comes after the NCCO moved on is dropped).
        let speechInput = Mutex(0)

        /// What speech input listens to: the phone's line, or the socket's.
        var listeningLine: (any SpeechListeningLine)? { line.withLock { $0 } ?? socket?.line.withLock { $0 } }
    }

    /// Hands a leg between loops (it is used by one loop at a time).
    private struct UncheckedLeg: @unchecked Sendable {
        let leg: RTPLeg
        let listening: PhoneLine.MachineListening?
    }

    private struct Attached: Sendable {
        var rooms: Rooms?
        var calls: Calls?
    }

    let mixer: MixerCallMedia
    /// Nil when the server runs no SIP edge (`--sip-port 0`): phone legs are refused, websockets still work.
    let edge: SIPEdge?
    /// Loops for the websocket legs' client connections.
    let group: EventLoopGroup
    let core: PlatformCore
    let pool: RTPPortPool
    let host: String
    /// `--rtp-timeout` in nanoseconds (0: never): an answered phone that sends nothing this long is hung up.
    let silenceLimit: UInt64
    private let resolve: @Sendable (String) -> MixerCallMedia.LegPlace?
    private let attached = Mutex(Attached())
    private let legs = Mutex<[String: PhoneLeg]>([:])
    /// Phone legs whose call has ended while their NCCO may still be running: the end is on its way to the leg
    /// (`dialStatus`), and what the NCCO asks meanwhile is moot (not a command for the mixer to refuse, whose error
    /// would end the leg first, under another status). Until the leg is released.
    private let ended = Mutex<Set<String>>([])
    /// App legs (WebRTC) an NCCO `conversation` moved: their audio is their clients', but what they hear and
    /// who hears them in the conversation's mix follows the same policy as a line's.
    private let appLegs = Mutex<[String: Attendee]>([:])
    /// Conversations a leg that starts them (`startOnEnter`) has joined; attendees of the others wait.
    private let started = Mutex<Set<String>>([])
    /// Conversations whose mixes are being worked out, each one run at a time (so a moderator joining while
    /// an attendee's music on hold starts cannot leave the music playing); true: asked again meanwhile.
    private let policyRuns = Mutex<[String: Bool]>([:])
    private let logger = Logger(label: "phone")

    init(mixer: MixerCallMedia, edge: SIPEdge?, group: EventLoopGroup, core: PlatformCore, rtpPorts: ClosedRange<UInt16>, host: String,
         rtpTimeout: Duration = .seconds(60), resolve: @escaping @Sendable (String) -> MixerCallMedia.LegPlace?) {
        silenceLimit = Instant(nanoseconds: 0).adding(rtpTimeout).nanoseconds
        self.mixer = mixer
        self.edge = edge
        self.group = group
        self.core = core
        pool = RTPPortPool(range: rtpPorts)
        self.host = host
        self.resolve = resolve
    }

    /// Connects the rooms and calls once they exist.
    func attach(rooms: Rooms, calls: Calls) {
        attached.withLock { $0 = Attached(rooms: rooms, calls: calls) }
    }

    /// Phone legs in progress.
    var activeCount: Int { legs.withLock { $0.count } }

    // MARK: CallMedia

    func perform(_ command: CallMediaCommand, leg uuid: String) throws(CallMediaError) {
        if ended.withLock({ $0.contains(uuid) }) { return }
        switch command {
        case .say, .play, .collectDigits, .collectSpeech, .startRecording, .sendDigits:
            // The NCCO needs the caller's audio: a ringing inbound call is answered first (for `bridge`, once
            // its line is in the conversation's mix, below).
            answerIfRinging(uuid)
        case .dial, .bridge, .stopRecording, .recordConversation, .detectMachine:
            break
        }
        switch command {
        case .dial(let endpoint, let from, _) where endpoint.kind == .phone || endpoint.kind == .sip:
            try dial(endpoint, from: from, leg: uuid)
        case .dial(.websocket(let uri, let contentType, let headers, let authorization), _, _):
            try dialWebSocket(uri, contentType: contentType, headers: headers, authorization: authorization, leg: uuid)
        case .sendDigits(let digits):
            guard let phone = legs.withLock({ $0[uuid] }) else { return try mixer.perform(command, leg: uuid) }
            if let sendKey = phone.sendKey {
                // In SIP INFO, one key at a time at the events' pace.
                Task {
                    for d in digits {
                        if d != "p" { sendKey(d) }
                        try? await Task.sleep(for: .milliseconds(d == "p" ? KeyPacing.pauseMilliseconds : KeyPacing.keyMilliseconds + KeyPacing.gapMilliseconds))
                    }
                }
                return
            }
            if let socket = phone.socket?.line.withLock({ $0 }) { return socket.loop.execute { socket.sendKeys(digits) } }
            guard let line = phone.line.withLock({ $0 }) else { throw .failed("dtmf: the call has no audio yet") }
            line.loop.execute { for d in digits { line.leg.sendDigit(d) } }
        case .detectMachine(let beep, let beepTimeout):
            guard let phone = legs.withLock({ $0[uuid] }), let line = phone.line.withLock({ $0 }), let events = parts()?.1 else {
                throw .failed("machine detection needs a phone or SIP call's audio")
            }
            line.loop.execute { line.listenForMachine(beep: beep, beepTimeout: beepTimeout) { events.machineDetection($0, leg: uuid) } }
        case .collectSpeech(let speech, let bargeIn):
            try listenForSpeech(speech, bargeIn: bargeIn, leg: uuid)
        case .collectDigits:
            // A phone leg's digits always reach the leg (RFC 4733); the NCCO engine decides what it collects.
            guard legs.withLock({ $0[uuid] }) != nil else { return try mixer.perform(command, leg: uuid) }
        case .bridge(let conversationID, let c):
            guard let phone = legs.withLock({ $0[uuid] }) else { return try mixer.perform(command, leg: uuid) }
            phone.state.withLock { $0.conversation = c }
            if c.startOnEnter { started.withLock { _ = $0.insert(conversationID) } }
            // A ringing call is answered once its line has moved: the phone starts sending when it hears the
            // answer, so what the caller says first reaches the conversation instead of the line in between.
            let isStarted = started.withLock { $0.contains(conversationID) }
            let left = phone.place.conversationID
            move(phone, to: conversationID, mix: mix(for: phone.snapshot, among: attendees(in: conversationID), started: isStarted, holdMusic: nil)) {
                if left != conversationID { self.applyPolicy(left) }
                self.applyPolicy(conversationID)
                self.answerIfRinging(uuid)
            }
        default:
            try mixer.perform(command, leg: uuid)
        }
    }

    func stop(leg uuid: String) {
        mixer.stop(leg: uuid)
        guard let phone = legs.withLock({ $0[uuid] }) else { return }
        phone.speechInput.withLock { $0 += 1 }
        if let line = phone.listeningLine { line.loop.execute { line.stopListeningForSpeech() } }
    }

    /// Speech input on a phone, SIP or websocket leg: the line finds the utterance on the mixer's clock, the recognizer
    /// reads it off the loop, and the result goes to the leg's NCCO unless it has moved on meanwhile.
    /// Another leg's voice (`speech.uuid`) is listened to in the conversation's mix, as an app leg's is.
    private func listenForSpeech(_ speech: NCCOAction.Input.Speech, bargeIn: Bool, leg uuid: String) throws(CallMediaError) {
        guard let phone = legs.withLock({ $0[uuid] }), (speech.uuid.first ?? uuid) == uuid else {
            return try mixer.perform(.collectSpeech(speech, bargeIn: bargeIn), leg: uuid)
        }
        do { try SpeechRecognizer.validate(language: speech.language) } catch { throw .failed(error.description) }
        guard let line = phone.listeningLine, let events = parts()?.1 else { throw .failed("the call has no audio yet") }
        let input = phone.speechInput.withLock { n -> Int in
            n += 1
            return n
        }
        let settings = speech.endpointing
        let mixer = self.mixer
        let current: @Sendable () -> Bool = { phone.speechInput.withLock { $0 } == input }
        // Over a prompt with `bargeIn`: the caller's first words stop it.
        let stopPrompt: @Sendable () -> Void = {
            guard current() else { return }
            mixer.stopPlaying(leg: uuid)
            events.speechStarted(leg: uuid)
        }
        let onStart = bargeIn ? stopPrompt : nil
        line.loop.execute {
            guard current() else { return }
            line.listenForSpeech(settings, onStart: onStart) { ending, samples, rate in
                Task {
                    let outcome = await SpeechOutcome.of(ending, samples: samples, rate: rate, speech: speech, recognizer: mixer.recognizer) {
                        (samples) throws(CallMediaError) in try mixer.keepUtterance(samples, rate: rate, leg: uuid)
                    }
                    if current() { events.speechFinished(outcome, leg: uuid) }
                }
            }
        }
    }

    func connected(leg uuid: String) { answerIfRinging(uuid) }

    /// Keys a leg's far end pressed: every websocket leg in its conversation gets them (`websocket:dtmf`).
    func keysPressed(_ digits: String, leg uuid: String) {
        guard let conversationID = resolve(uuid)?.conversationID else { return }
        let sockets = legs.withLock { all in all.values.compactMap { $0.uuid != uuid && $0.place.conversationID == conversationID ? $0.socket : nil } }
        for socket in sockets {
            guard let line = socket.line.withLock({ $0 }) else { continue }
            line.loop.execute { line.sendKeys(digits) }
        }
    }

    /// An app leg's client follows it into the conversation over `rtc:*`; its mix follows the action.
    func appLegJoined(leg uuid: String, conversationID: String, _ c: NCCOAction.Conversation) {
        guard let place = resolve(uuid) else { return }
        let left = appLegs.withLock { $0.updateValue(Attendee(uuid: uuid, place: place, conversation: c), forKey: uuid) }?.place.conversationID
        if c.startOnEnter { started.withLock { _ = $0.insert(conversationID) } }
        if let left, left != conversationID { applyPolicy(left) }
        applyPolicy(conversationID)
    }

    // MARK: Who hears whom

    /// The legs in the conversation: phones with their lines, app legs with their clients.
    private func attendees(in conversationID: String) -> [Attendee.State] {
        (legs.withLock { Array($0.values) as [Attendee] } + appLegs.withLock { Array($0.values) }).map(\.snapshot)
            .filter { $0.place.conversationID == conversationID }
    }

    /// What `attendee` hears and who hears it among `others` (the conversation's legs).
    private func mix(for attendee: Attendee.State, among others: [Attendee.State], started: Bool, holdMusic: MixerParticipantID?) -> MemberMix {
        ConversationPolicy.mix(conversation: attendee.conversation, started: started, holdMusic: holdMusic) { uuid in others.first { $0.uuid == uuid }?.place.memberID }
    }

    /// Has what every leg of the conversation hears worked out again (a leg came or left, or the moderator
    /// joined): one run at a time per conversation, coalescing what was asked meanwhile, and no
    /// conversation waits behind another's music being fetched.
    private func applyPolicy(_ conversationID: String) {
        guard let rooms = attached.withLock({ $0.rooms }) else { return }
        let first = policyRuns.withLock { runs -> Bool in
            if runs[conversationID] != nil {
                runs[conversationID] = true
                return false
            }
            runs[conversationID] = false
            return true
        }
        guard first else { return }
        Task {
            repeat { await workOutPolicy(conversationID, rooms: rooms) } while policyRuns.withLock { runs -> Bool in
                if runs[conversationID] == true {
                    runs[conversationID] = false
                    return true
                }
                runs[conversationID] = nil
                return false
            }
        }
    }

    /// Sets each leg's mix and starts or stops the music on hold.
    private func workOutPolicy(_ conversationID: String, rooms: Rooms) async {
        let present = attendees(in: conversationID)
        // Forgotten once no call is left in it.
        let over = present.isEmpty && !((try? core.calls.legs(inConversation: conversationID))?.contains { !$0.status.isTerminal } ?? false)
        let isStarted = started.withLock { s -> Bool in
            if over { s.remove(conversationID) }
            return s.contains(conversationID)
        }
        let waiting = isStarted ? nil : present.first { $0.conversation?.startOnEnter == false && $0.conversation?.musicOnHoldURL != nil }
        func setMixes(holdMusic: MixerParticipantID?) async {
            var mixes: [String: MemberMix] = [:]
            for attendee in present { mixes[attendee.place.memberID] = mix(for: attendee, among: present, started: isStarted, holdMusic: holdMusic) }
            await rooms.setMemberMixes(conversationID: conversationID, applicationID: present.first?.place.applicationID, mixes)
        }
        guard let waiting, let music = waiting.conversation?.musicOnHoldURL else {
            await mixer.stopHoldMusic(conversationID: conversationID)
            return await setMixes(holdMusic: nil)
        }
        await rooms.requireMix(conversationID: conversationID)
        if mixer.holdMusic(conversationID: conversationID) == nil, await rooms.mixer(conversationID: conversationID) == nil {
            // The music plays into the conversation's mix, which needs someone in it (an app attendee's client
            // joins a moment after its leg moved); meanwhile the attendees wait hearing nothing.
            await setMixes(holdMusic: nil)
            if await MixerCallMedia.listeners(of: waiting.place, rooms: rooms).isEmpty {
                // Its client has not come yet: asked again a little later, for as long as the leg waits.
                Task {
                    try? await Task.sleep(for: .seconds(1))
                    applyPolicy(conversationID)
                }
                return
            }
        }
        await setMixes(holdMusic: await mixer.startHoldMusic(music, conversationID: conversationID))
    }

    func declined(leg uuid: String, status: String) {
        guard let phone = legs.withLock({ $0[uuid] }), !phone.answered, let refuse = phone.refuse else { return }
        phone.answer = nil
        phone.refuse = nil
        refuse(Self.sipStatus(declined: status))
    }

    /// The final response refusing an inbound call whose leg ended with `status` before it was answered.
    static func sipStatus(declined status: String) -> Int {
        switch status {
        case "rejected": 603
        case "busy": 486
        default: 480
        }
    }

    private func answerIfRinging(_ uuid: String) {
        guard let phone = legs.withLock({ $0[uuid] }), !phone.answered, let answer = phone.answer else { return }
        phone.answer = nil
        phone.refuse = nil
        phone.answered = true
        answer()
        watchSilence(phone)
        parts()?.1.dialStatus("answered", reason: nil, leg: uuid)
    }

    func release(leg uuid: String) {
        ended.withLock { _ = $0.remove(uuid) }
        mixer.release(leg: uuid)
        if let app = appLegs.withLock({ $0.removeValue(forKey: uuid) }) { applyPolicy(app.place.conversationID) }
        guard let phone = legs.withLock({ $0.removeValue(forKey: uuid) }) else { return }
        phone.hangup()
        removeLine(phone)
        applyPolicy(phone.place.conversationID)
    }

    // MARK: Outbound

    private func dial(_ endpoint: CallEndpoint, from: String?, leg uuid: String) throws(CallMediaError) {
        guard edge != nil else { throw .unavailable("no SIP trunk can carry \(endpoint.kind.rawValue) calls: this server runs no SIP edge (--sip-port 0)") }
        guard let place = resolve(uuid) else { throw .unavailable("leg \(uuid) is in no conversation") }
        let callerID = from.flatMap(CallEndpoint.normalizedNumber) ?? from ?? "anonymous"
        let target: OutboundTarget
        switch endpoint {
        case .phone(let number, _, let shaken):
            target = .number(number, trunk: try trunk(forCaller: callerID, callee: number), headers: shaken.map { [("Identity", $0)] } ?? [])
        case .sip(let text, let headers, let userToUser):
            guard let uri = SIPURI.dialable(text) else { throw .failed("connect: \(text) is not a SIP URI") }
            // The application's headers as `X-` headers, and User-to-User, in the INVITE.
            let sent = headers.sorted { $0.key < $1.key }.map { name, value in
                (name.lowercased().hasPrefix("x-") ? name : "X-" + name, value)
            } + (userToUser.map { [("User-to-User", $0)] } ?? [])
            // A device of this server (its domain is an application's id, where devices register), else the URI's
            // own host, dialled directly.
            if let user = uri.user, (try? core.applications.get(id: uri.host)) != nil {
                target = .device("\(user)@\(uri.host)", headers: sent)
            } else {
                target = .uri(uri, headers: sent)
            }
        default:
            throw .unavailable("\(endpoint.kind.rawValue) legs are not placed over SIP")
        }
        let phone = PhoneLeg(uuid: uuid, place: place)
        legs.withLock { $0[uuid] = phone }
        Task { await self.place(phone, target: target, callerID: callerID) }
    }

    private enum OutboundTarget: Sendable {
        /// `headers`: a STIR/SHAKEN `Identity`, when the application gave one.
        case number(String, trunk: String, headers: [(String, String)])
        /// A registered device, by its address of record (`user@domain`).
        case device(String, headers: [(String, String)])
        case uri(SIPURI, headers: [(String, String)])
    }

    /// The trunk of the dialled number when it is one of this server's (no carrier knows it: the
    /// development test phone, a loopback PBX); else the trunk that owns the caller's number; with one
    /// trunk on the server, that one.
    private func trunk(forCaller callerID: String, callee: String) throws(CallMediaError) -> String {
        guard let edge else { throw .unavailable("this server runs no SIP edge") }
        if let dialled = CallEndpoint.normalizedNumber(callee).flatMap({ edge.directory.route(number: $0)?.trunk }) { return dialled }
        if let trunk = edge.directory.route(number: callerID)?.trunk { return trunk }
        let all = (try? core.sipTrunks.all()) ?? []
        if all.count == 1 { return all[0].id }
        if all.isEmpty { throw .unavailable("no SIP trunk is configured for phone calls") }
        throw .failed("connect: the from number \(callerID) belongs to no trunk; link it with /number/buy and a trunk_id")
    }

    private func place(_ phone: PhoneLeg, target: OutboundTarget, callerID: String) async {
        guard let edge, let (rooms, events) = parts() else { return }
        let uuid = phone.uuid
        let line: PhoneLine
        do { line = try await addLine(phone, rooms: rooms, negotiated: nil) } catch {
            return finish(phone, status: "failed", reason: "\(error)", events: events)
        }
        // SDES keys are offered only where the signalling is TLS: the trunk's setting, else best effort.
        var offered = AudioSessionConfig(address: host, port: line.leg.port)
        switch target {
        case .number(_, let trunk, _): offered.encryption = encryption(ofTrunk: trunk)
        case .device(let aor, _): offered.encryption = await edge.reachesOverTLS(aor) ? .optional : .none
        case .uri(let uri, _): offered.encryption = uri.isTLS ? .optional : .none
        }
        let offer = PlainRTPNegotiator.offer(offered, sessionID: UInt64(line.leg.port), version: 1)
        let call: OutboundCall
        do {
            switch target {
            case .number(let number, let trunk, let headers):
                call = try await edge.placeCall(to: number, from: callerID, trunk: trunk, headers: headers, sdp: offer)
            case .device(let aor, let headers):
                call = try await edge.callUser(aor, from: callerID, headers: headers, sdp: offer)
            case .uri(let uri, let headers):
                let addresses = try await NameResolver.shared.addresses(of: uri.hostPort.host, port: 0).map(\.host)
                call = try await edge.callURI(uri, at: addresses, from: callerID, headers: headers, sdp: offer)
            }
        } catch {
            return finish(phone, status: "failed", reason: "\(error)", events: events)
        }
        phone.hangup = { call.hangup() }
        if case .number(_, let trunkID, _) = target, trunk(trunkID)?.dtmf == "info" { phone.sendKey = { call.sendKey($0) } }
        // Released while the INVITE was being sent: cancel it now.
        guard legs.withLock({ $0[uuid] }) === phone else { return call.hangup() }
        var ringing = false
        for await event in call.events {
            switch event {
            case .progress(_, let status, let answer):
                if let answer, !configure(phone, answer: answer, offered: offered) { return refuseUnkeyed(phone, call: call, events: events) }
                if !ringing, status == 180 || status == 183 {
                    ringing = true
                    events.dialStatus("ringing", reason: nil, leg: uuid)
                }
            case .connected(_, let remote):
                if let remote, !configure(phone, answer: remote, offered: offered) { return refuseUnkeyed(phone, call: call, events: events) }
                phone.answered = true
                watchSilence(phone)
                events.dialStatus("answered", reason: nil, leg: uuid)
            case .updated(_, let remote):
                if let line = phone.line.withLock({ $0 }) { line.loop.execute { line.reoffered(remote) } }
            case .digit(_, let key):
                events.digits(String(key), leg: uuid)
            case .ended(_, let status, let reason):
                finish(phone, status: Self.legStatus(sipStatus: status, answered: phone.answered), reason: reason, events: events)
            case .incomingCall:
                break
            }
        }
    }

    private func refuseUnkeyed(_ phone: PhoneLeg, call: OutboundCall, events: any CallMediaEvents) {
        call.hangup()
        finish(phone, status: "failed", reason: "the far end answered without the SRTP its trunk requires (media_encryption srtp or dtls-srtp)",
               events: events)
    }

    /// Sets the leg from the peer's answer; false when the answer lacks the SRTP keys we required
    /// (then no audio may flow in the clear, and the caller ends the call).
    private func configure(_ phone: PhoneLeg, answer: SessionDescription, offered: AudioSessionConfig) -> Bool {
        guard let line = phone.line.withLock({ $0 }) else { return true }
        do {
            let negotiated = try PlainRTPNegotiator.negotiated(answer: answer, offered: offered)
            line.loop.execute { try? line.configure(negotiated) }
        } catch {
            logger.warning("unusable answer SDP", ["leg": phone.uuid, "error": "\(error)"])
            return error != .noUsableCrypto
        }
        return true
    }

    /// What a trunk asks of its calls' media (`media_encryption`).
    private func trunk(_ id: String?) -> SIPTrunk? { id.flatMap { try? core.sipTrunks.find(id: $0) } }

    private func encryption(ofTrunk id: String?) -> MediaEncryption {
        trunk(id).flatMap { MediaEncryption(rawValue: $0.mediaEncryption) } ?? .none
    }

    /// The leg status a SIP call's end gives: nil (BYE or CANCEL) completes an answered call.
    static func legStatus(sipStatus: Int?, answered: Bool) -> String {
        guard let sipStatus else { return answered ? "completed" : "cancelled" }
        switch sipStatus {
        case 486, 600: return "busy"
        case 603: return "rejected"
        case 408, 480: return "unanswered"
        case 487: return "cancelled"
        default: return "failed"
        }
    }

    // MARK: WebSocket

    /// `connect` to a websocket: the socket opens (answered), its first message says what it carries, then
    /// 20 ms L16 messages flow both ways through the conversation's mix until either side closes.
    private func dialWebSocket(_ uri: String, contentType: String, headers: [String: String], authorization: WebSocketAuthorization?,
                               leg uuid: String) throws(CallMediaError) {
        let type = contentType.lowercased().replacingOccurrences(of: " ", with: "")
        let rate: SampleRate
        switch type {
        case "audio/l16;rate=24000": rate = .hz24000
        case "audio/l16;rate=16000": rate = .hz16000
        case "audio/l16;rate=8000": rate = .hz8000
        default: throw .failed("connect: websocket content-type must be audio/l16;rate=8000, 16000 or 24000, not \(contentType)")
        }
        guard let place = resolve(uuid) else { throw .unavailable("leg \(uuid) is in no conversation") }
        var handshake = HTTPHeaders()
        switch authorization {
        case .vonage?:
            // The JWT that signs the application's webhooks (over an empty body: a handshake has none).
            guard let app = try? core.applications.get(id: place.applicationID),
                  let bearer = WebhookSigner.authorization(body: [], application: app) else { throw .failed("connect: the application cannot sign") }
            handshake.add(name: "Authorization", value: bearer)
        case .custom(let value)?:
            handshake.add(name: "Authorization", value: value)
        case nil:
            break
        }
        let phone = PhoneLeg(uuid: uuid, place: place, socket: WebSocketLine.Holder())
        legs.withLock { $0[uuid] = phone }
        Task { await self.openWebSocket(phone, uri: uri, rate: rate, contentType: type, headers: headers, handshake: handshake) }
    }

    private func openWebSocket(_ phone: PhoneLeg, uri: String, rate: SampleRate, contentType: String, headers: [String: String],
                               handshake: HTTPHeaders) async {
        guard let (rooms, events) = parts(), let box = phone.socket else { return }
        var callbacks = WebSocketCallbacks()
        callbacks.onBinary = { _, bytes in box.received(bytes) }
        callbacks.onText = { _, text in box.received(text: text, framing: .binary) }
        // The application closed it (a hangup from this side has let go of the leg first): `disconnected`, which
        // a synchronous connect's event URL may answer with a fallback NCCO (else the leg is `completed`: `LiveLeg`).
        callbacks.onClose = { [weak self] _, code, reason in
            self?.finish(phone, status: "disconnected", reason: "websocket closed (\(code)) \(reason)", events: events)
        }
        let socket: WebSocket
        do {
            socket = try await WebSocketClient.connect(url: uri, headers: handshake, group: group, callbacks: callbacks)
        } catch {
            return finish(phone, status: "failed", reason: "websocket \(uri): \(error)", events: events)
        }
        phone.hangup = { socket.close(code: 1000, reason: "hangup") }
        guard legs.withLock({ $0[phone.uuid] }) === phone else { return socket.close(code: 1000, reason: "hangup") }
        var first: [String: JSONValue] = ["event": "websocket:connected", "content-type": .string(contentType)]
        for (k, v) in headers { first[k] = .string(v) }
        socket.send(text: WebSocketLine.openingMessage(first))
        do {
            try await rooms.addLine(conversationID: phone.place.conversationID, applicationID: phone.place.applicationID,
                                    memberID: phone.place.memberID) { loop in
                let made = try WebSocketLine(loop: loop, rate: rate, socket: socket)
                box.line.withLock { $0 = made }
                return made
            }
        } catch {
            socket.close(code: 1011, reason: "no mixer")
            return finish(phone, status: "failed", reason: "\(error)", events: events)
        }
        phone.answered = true
        events.dialStatus("answered", reason: nil, leg: phone.uuid)
    }

    // MARK: Inbound

    /// An INVITE to a number of an application (on the edge's loop): the leg is made, its RTP joins the
    /// conversation's mix, the call is answered, then the answer URL's NCCO runs.
    func incomingCall(_ call: IncomingCall) {
        guard edge != nil else { return call.reject(status: 480) }
        Task { await self.take(call) }
    }

    private func take(_ call: IncomingCall) async {
        guard let (rooms, events) = parts(), let calls = attached.withLock({ $0.calls }) else { return call.reject(status: 480) }
        guard let offer = call.offer else { return call.reject(status: 488) }
        guard let appID = call.route?.applicationID, let app = try? core.applications.get(id: appID), app.voiceAnswer != nil else {
            return call.reject(status: 480)
        }
        // One key for the probe and the answer: the leg protects with the key the answer carries.
        let probe = AudioSessionConfig(address: host, port: 9, encryption: encryption(ofTrunk: call.trunk))
        guard let (_, negotiated) = try? PlainRTPNegotiator.answer(offer, local: probe, sessionID: 1, version: 1) else {
            return call.reject(status: 488)
        }
        let caller = call.from.uri.user ?? "unknown"
        var headers: [String: String] = [:]
        for field in call.headers where field.name.hasPrefix("X-") { headers[field.name] = field.value }
        let leg: CallLeg
        do {
            leg = try calls.incoming(application: app, from: .phone(number: CallEndpoint.normalizedNumber(caller) ?? caller, dtmfAnswer: nil),
                                     to: .phone(number: call.number, dtmfAnswer: nil), sipHeaders: headers)
        } catch {
            return call.reject(status: 500)
        }
        let phone = PhoneLeg(uuid: leg.uuid, place: MixerCallMedia.LegPlace(conversationID: leg.conversationID, memberID: leg.memberID,
                                                                            applicationID: app.id))
        phone.hangup = { call.hangup() }
        phone.refuse = { status in call.reject(status: status) }
        if trunk(call.trunk)?.dtmf == "info" { phone.sendKey = { call.sendKey($0) } }
        legs.withLock { $0[leg.uuid] = phone }
        let line: PhoneLine
        do { line = try await addLine(phone, rooms: rooms, negotiated: negotiated) } catch {
            call.reject(status: 503)
            return finish(phone, status: "failed", reason: "\(error)", events: events)
        }
        var local = probe
        local.port = line.leg.port
        guard let (answer, _) = try? PlainRTPNegotiator.answer(offer, local: local, sessionID: UInt64(line.leg.port), version: 1) else {
            call.reject(status: 488)
            return finish(phone, status: "failed", reason: "no common codec", events: events)
        }
        // It rings while its NCCO starts; the first action that needs audio, or an answered connect, answers it.
        phone.answer = { call.answer(sdp: answer) }
        call.ring()
        await calls.start(uuid: leg.uuid)
        for await event in call.events {
            switch event {
            case .updated(_, let remote):
                line.loop.execute { line.reoffered(remote) }
            case .digit(_, let key):
                events.digits(String(key), leg: leg.uuid)
            case .ended(_, let status, let reason):
                finish(phone, status: Self.legStatus(sipStatus: status, answered: phone.answered), reason: reason, events: events)
            default:
                break
            }
        }
    }

    // MARK: Lines

    private func parts() -> (Rooms, any CallMediaEvents)? {
        attached.withLock { a in
            guard let rooms = a.rooms, let calls = a.calls else { return nil }
            return (rooms, calls)
        }
    }

    /// The leg's RTP as a line in its conversation's mix.
    private func addLine(_ phone: PhoneLeg, rooms: Rooms, negotiated: NegotiatedAudio?) async throws -> PhoneLine {
        let (pool, host) = (pool, host)
        try await rooms.addLine(conversationID: phone.place.conversationID, applicationID: phone.place.applicationID,
                                memberID: phone.place.memberID, make: factory(phone) { loop in
                                    try PhoneLine(loop: loop, pool: pool, host: host, negotiated: negotiated)
                                })
        guard let line = phone.line.withLock({ $0 }) else { throw CallMediaError.failed("the phone line was not made") }
        return line
    }

    /// The mixer port of a phone leg: `make` builds the line on the mixer's loop; the phone's DTMF goes
    /// to the leg, and the leg keeps the line (for DTMF out, answers, moves).
    private func factory(_ phone: PhoneLeg, _ make: @escaping @Sendable (EventLoop) throws -> PhoneLine) -> MixerPortFactory {
        let (uuid, events, limit) = (phone.uuid, parts()?.1, silenceLimit)
        return { [weak self] loop in
            let line = try make(loop)
            line.onDigit = { digit in events?.digits(String(digit), leg: uuid) }
            line.leg.onDTLSFailure = { failure in self?.encryptionFailed(phone, failure) }
            // A line made for an answered call (moved to another conversation) watches its peer at once.
            if phone.answered { line.watchSilence(limit: limit) { self?.silentPeer(phone) } }
            phone.line.withLock { $0 = line }
            return line
        }
    }

    private func removeLine(_ phone: PhoneLeg) {
        guard let rooms = attached.withLock({ $0.rooms }) else { return }
        let place = phone.place
        Task { await rooms.removeLine(conversationID: place.conversationID, memberID: place.memberID) }
    }

    /// An NCCO `conversation` action on a phone leg: its RTP leg moves, sockets and session kept, to
    /// that conversation's mix (the store has moved its member already).
    /// `then` runs once the line is in the new mix (or the move failed, or there was nothing to move).
    private func move(_ phone: PhoneLeg, to conversationID: String, mix: MemberMix,
                      then: @escaping @Sendable () -> Void) {
        guard let rooms = attached.withLock({ $0.rooms }), phone.place.conversationID != conversationID,
              let moved = resolve(phone.uuid) else { return then() }
        if let socket = phone.socket { return move(phone, socket: socket, to: moved, mix: mix, rooms: rooms, then: then) }
        guard let old = phone.line.withLock({ $0 }) else { return then() }
        let from = phone.place
        phone.place = moved
        let uuid = phone.uuid
        Task {
            let handed = await withCheckedContinuation { c in
                old.loop.execute { c.resume(returning: UncheckedLeg(leg: old.handOver(), listening: old.listening)) }
            }
            await rooms.removeLine(conversationID: from.conversationID, memberID: from.memberID)
            do {
                try await rooms.addLine(conversationID: moved.conversationID, applicationID: moved.applicationID, memberID: moved.memberID,
                                        mix: mix, make: factory(phone) { loop in
                                            let line = try PhoneLine(loop: loop, leg: handed.leg, negotiated: nil)
                                            line.listening = handed.listening
                                            return line
                                        })
            } catch {
                logger.warning("phone leg not moved", ["leg": uuid, "conversation": moved.conversationID, "error": "\(error)"])
            }
            then()
        }
    }

    /// A websocket leg into another conversation's mix: a line of the same socket there (what the old one had
    /// queued to play is dropped with it). A socket not open yet joins the new conversation when it opens.
    private func move(_ phone: PhoneLeg, socket: WebSocketLine.Holder, to moved: MixerCallMedia.LegPlace, mix: MemberMix, rooms: Rooms,
                      then: @escaping @Sendable () -> Void) {
        let from = phone.place
        phone.place = moved
        guard let old = socket.line.withLock({ $0 }) else { return then() }
        Task {
            await rooms.removeLine(conversationID: from.conversationID, memberID: from.memberID)
            do {
                try await rooms.addLine(conversationID: moved.conversationID, applicationID: moved.applicationID, memberID: moved.memberID,
                                        mix: mix) { loop in
                    let line = try WebSocketLine(loop: loop, rate: old.rate, socket: old.socket)
                    socket.line.withLock { $0 = line }
                    return line
                }
            } catch {
                logger.warning("websocket leg not moved", ["leg": phone.uuid, "conversation": moved.conversationID, "error": "\(error)"])
            }
            then()
        }
    }

    /// The call is answered: from now on a far end gone silent past `--rtp-timeout` is hung up.
    private func watchSilence(_ phone: PhoneLeg) {
        guard silenceLimit > 0, let line = phone.line.withLock({ $0 }) else { return }
        let limit = silenceLimit
        line.loop.execute { [weak self] in line.watchSilence(limit: limit) { self?.silentPeer(phone) } }
    }

    /// An answered phone sent nothing for `--rtp-timeout` (it vanished without a BYE): hang up, and the leg
    /// ends `completed`.
    private func silentPeer(_ phone: PhoneLeg) {
        guard let events = parts()?.1 else { return }
        logger.warning("no RTP or RTCP from the far end: hanging up", ["leg": phone.uuid])
        phone.hangup()
        finish(phone, status: "completed", reason: "rtp timeout", events: events)
    }

    /// The leg's DTLS-SRTP handshake failed (a certificate not matching the fingerprint, a peer that does not
    /// speak DTLS): it would never carry audio, so the call ends, `failed`.
    private func encryptionFailed(_ phone: PhoneLeg, _ failure: DTLSFailure) {
        guard let events = parts()?.1 else { return }
        logger.warning("DTLS-SRTP handshake failed: hanging up", ["leg": phone.uuid, "failure": "\(failure)"])
        // The leg's end first: what the SIP side reports as it ends comes after, for a leg already gone.
        finish(phone, status: "failed", reason: "the DTLS-SRTP handshake failed (\(failure))", events: events)
        if !phone.answered, let refuse = phone.refuse {
            // Still ringing: refused, its media not acceptable here.
            phone.answer = nil
            phone.refuse = nil
            refuse(488)
        } else {
            phone.hangup()
        }
    }

    /// The leg's far end is gone (the SIP call ended, the socket closed): its line leaves the mix and the leg hears the status.
    private func finish(_ phone: PhoneLeg, status: String, reason: String, events: any CallMediaEvents) {
        let known = legs.withLock { l -> Bool in
            guard l[phone.uuid] === phone else { return false }
            l[phone.uuid] = nil
            return true
        }
        removeLine(phone)
        guard known else { return }
        ended.withLock { _ = $0.insert(phone.uuid) }
        events.dialStatus(status, reason: reason, leg: phone.uuid)
    }
}
