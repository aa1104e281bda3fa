import Wire

/// The narrow seam between a call's control (the NCCO engine, REST, realtime) and its audio: the mixer
/// and the telephony edge implement it. Commands start work and return; what happens later comes back
/// through `CallMediaEvents`.
public protocol CallMedia: Sendable {
    /// Starts `command` on the leg; throws when it cannot run at all.
    func perform(_ command: CallMediaCommand, leg: String) throws(CallMediaError)
    /// Stops what plays into the leg (talk, stream, digit collection).
    func stop(leg: String)
    /// The leg has ended: release everything it held.
    func release(leg: String)
    /// A `connect` the leg dialled was answered: a call still waiting to be answered (an inbound phone
    /// call) is answered now.
    func connected(leg: String)
    /// An NCCO `conversation` moved an app leg (whose client brings its audio over `rtc:*`) into the
    /// conversation: what it hears and who hears it follow the action (`mute`, `canHear`, `canSpeak`, a
    /// moderated conversation's wait), and one that starts it (`startOnEnter`, the default) ends the
    /// attendees' wait.
    func appLegJoined(leg: String, conversationID: String, _ conversation: NCCOAction.Conversation)
    /// The leg ends without ever being answered, because its `connect` ended with `status` (rejected,
    /// busy, timeout...) or its NCCO ran out: an inbound call is refused with the matching response.
    func declined(leg: String, status: String)
    /// Keys the leg's far end pressed (a phone's RFC 4733 or SIP INFO keys, an app user's `call:dtmf`): the
    /// websocket legs in its conversation are told (`websocket:dtmf`).
    func keysPressed(_ digits: String, leg: String)
}

extension CallMedia {
    public func connected(leg: String) {}
    public func declined(leg: String, status: String) {}
    public func appLegJoined(leg: String, conversationID: String, _ conversation: NCCOAction.Conversation) {}
    public func keysPressed(_ digits: String, leg: String) {}
}

/// What media reports back to the calls it serves.
public protocol CallMediaEvents: AnyObject, Sendable {
    /// A talk or stream finished playing.
    func mediaFinished(leg: String)
    /// DTMF arrived from the leg.
    func digits(_ digits: String, leg: String)
    /// A dialled leg changed status (`ringing`, `answered`, `busy`, `failed`, `completed`…); `reason` says
    /// why a leg failed, for its event.
    func dialStatus(_ status: String, reason: String?, leg: String)
    /// A recording the leg's NCCO started has ended; `fields` go to the record action's event URL. A
    /// synchronous one (`NCCOAction.Record.isSynchronous`) lets the NCCO go on.
    func recordingFinished(leg: String, record: NCCOAction.Record, fields: [String: JSONValue])
    /// A recording the leg's NCCO asked for could not start.
    func recordingFailed(leg: String, record: NCCOAction.Record, reason: String)
    /// What machine detection found on the leg (`detectMachine`).
    func machineDetection(_ result: MachineDetectionResult, leg: String)
    /// What listening for speech on the leg came to (`collectSpeech`).
    func speechFinished(_ outcome: SpeechOutcome, leg: String)
    /// The caller began speaking to a `collectSpeech` with `bargeIn`; what played into the leg has been stopped.
    func speechStarted(leg: String)
}

extension CallMediaEvents {
    public func recordingFinished(leg: String, record: NCCOAction.Record, fields: [String: JSONValue]) {}
    public func recordingFailed(leg: String, record: NCCOAction.Record, reason: String) {}
    public func machineDetection(_ result: MachineDetectionResult, leg: String) {}
    public func speechFinished(_ outcome: SpeechOutcome, leg: String) {}
    public func speechStarted(leg: String) {}
}

/// Why media refused a command.
public enum CallMediaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// This server has no mixer or trunk for it.
    case unavailable(String)
    case failed(String)

    public var description: String {
        switch self {
        case .unavailable(let what), .failed(let what): what
        }
    }
}

/// Media for a server with no mixer and no SIP trunk: every command is refused with what is missing.
/// In-app legs still talk through conversations (`rtc:*`), which need none of this.
public struct NoCallMedia: CallMedia {
    public init() {}

    public func perform(_ command: CallMediaCommand, leg: String) throws(CallMediaError) {
        switch command {
        case .say: throw .unavailable("talk needs the audio mixer, which this server does not run")
        case .play: throw .unavailable("stream needs the audio mixer, which this server does not run")
        // Keys reach the NCCO from the leg's signalling (an app's `call:dtmf`): nothing to start.
        case .collectDigits: return
        case .collectSpeech: throw .unavailable("speech input needs the leg's audio, which this server does not run")
        case .startRecording: throw .unavailable("record needs the audio mixer, which this server does not run")
        case .stopRecording: return
        case .recordConversation: throw .unavailable("recording a conversation needs the audio mixer, which this server does not run")
        case .sendDigits: throw .unavailable("DTMF needs the leg's audio, which this server does not run")
        case .detectMachine: throw .unavailable("machine detection needs the leg's audio, which this server does not run")
        case .bridge: throw .unavailable("this leg's audio cannot join a conversation without the audio mixer")
        case .dial(let endpoint, _, _):
            switch endpoint.kind {
            case .phone, .sip: throw .unavailable("no SIP trunk is configured for \(endpoint.kind.rawValue) calls")
            case .websocket: throw .unavailable("websocket legs need the audio mixer, which this server does not run")
            case .app: throw .unavailable("app legs are placed over the realtime protocol")
            }
        }
    }

    public func stop(leg: String) {}
    public func release(leg: String) {}
}
