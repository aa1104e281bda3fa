/// One action of an NCCO (Nexmo Call Control Object), with its options resolved to their defaults.
public enum NCCOAction: Sendable, Hashable {
    case talk(Talk)
    case stream(Stream)
    case input(Input)
    case record(Record)
    case conversation(Conversation)
    case connect(Connect)
    case notify(Notify)
    case wait(Wait)

    public enum Name: String, Sendable, Hashable, CaseIterable {
        case talk, stream, input, record, conversation, connect, notify, wait
    }

    public var name: Name {
        switch self {
        case .talk: .talk
        case .stream: .stream
        case .input: .input
        case .record: .record
        case .conversation: .conversation
        case .connect: .connect
        case .notify: .notify
        case .wait: .wait
        }
    }

    /// A webhook an action names: `eventUrl` (an array of one URL in the API) and `eventMethod`.
    public struct Callback: Sendable, Hashable {
        public var url: String
        public var method: Method
        public init(url: String, method: Method = .post) {
            self.url = url
            self.method = method
        }
    }

    public enum Method: String, Sendable, Hashable {
        case get = "GET", post = "POST"
    }

    /// Speech synthesis: `text` said `loop` times (0 = until the next action or hangup).
    public struct Talk: Sendable, Hashable {
        public var text: String
        public var language = "en-US"
        public var style = 0
        public var premium = false
        public var loop = 1
        public var level = 0.0
        public var bargeIn = false
        public init(text: String) { self.text = text }
    }

    /// Audio from a URL into the call.
    public struct Stream: Sendable, Hashable {
        public var url: String
        public var loop = 1
        public var level = 0.0
        public var bargeIn = false
        public init(url: String) { self.url = url }
    }

    /// Collects DTMF digits, then asks `eventUrl` for the NCCO that replaces the rest.
    public struct Input: Sendable, Hashable {
        /// Whether keys are collected (`type` has `dtmf`, or no `type` and no speech settings).
        public var dtmf = true
        /// Seconds of silence after the last digit before the input is sent (0 to 10).
        public var timeOut = 3
        public var maxDigits = 4
        public var submitOnHash = false
        /// `mode: asynchronous`: the NCCO goes on at once and every key pressed from then on is sent by itself, as it
        /// is pressed (keys only, no dtmf settings).
        public var asynchronous = false
        /// Speech is listened for (`type` has `speech`).
        public var speech: Speech?
        public var eventURL: Callback?
        public init() {}

        /// `speech`: how one utterance of the leg is listened for and read.
        public struct Speech: Sendable, Hashable {
            /// The leg whose voice is listened to: at most one, in this leg's conversation (this leg when empty).
            public var uuid: [String] = []
            /// Seconds of silence that end the utterance (0.4 to 10).
            public var endOnSilence = 2.0
            public var language = "en-US"
            /// Phrases the caller is expected to say.
            public var context: [String] = []
            /// Seconds to wait for speech to begin (1 to 60).
            public var startTimeout = 10
            /// Longest utterance in seconds (1 to 60).
            public var maxDuration = 60
            /// 0 to 100: how quiet a sound still counts as speech.
            public var sensitivity = 50
            /// What was said is kept as a recording, its URL in the result.
            public var saveAudio = false
            public init() {}
        }
    }

    /// Records the call.
    public struct Record: Sendable, Hashable {
        public enum Format: String, Sendable, Hashable { case mp3, wav, ogg }
        public var format = Format.mp3
        /// `split: "conversation"`: each direction on its own channel.
        public var split = false
        public var channels = 1
        /// Seconds of silence that end the recording (3 to 10); nil: silence does not.
        public var endOnSilence: Int?
        /// A key (0-9, *, #) that ends the recording.
        public var endOnKey: Character?
        /// The longest recording, in seconds (3 to 7200); nil: 7200, and the recording runs beside the rest
        /// of the NCCO until the call ends.
        public var timeOut: Int?
        public var beepStart = false
        public var eventURL: Callback?
        public init() {}

        /// The longest recording, in seconds.
        public var maxDuration: Int { timeOut ?? 7200 }
        /// With a condition that ends it (`endOnSilence`, `endOnKey` or `timeOut`) the NCCO waits for the
        /// recording to end before its next action; without one the recording runs beside the rest.
        public var isSynchronous: Bool { endOnSilence != nil || endOnKey != nil || timeOut != nil }
    }

    /// Puts the leg into a named conversation of the application.
    public struct Conversation: Sendable, Hashable {
        public var name: String
        public var musicOnHoldURL: String?
        public var startOnEnter = true
        public var endOnExit = false
        public var record = false
        public var mute = false
        /// Leg uuids this leg is heard by / hears; nil means everyone.
        public var canSpeak: [String]?
        public var canHear: [String]?
        /// Where the `record: true` recording is reported (else the application's event URL).
        public var eventURL: Callback?
        public init(name: String) { self.name = name }
    }

    /// Dials an endpoint and bridges it to this leg.
    public struct Connect: Sendable, Hashable {
        public var endpoint: CallEndpoint
        public var from: String?
        public var randomFromNumber = false
        /// `eventType: "synchronous"`: the NCCO waits for the connected leg and its eventUrl may answer an NCCO.
        public var synchronous = false
        /// Seconds to wait for an answer (3 to 7200).
        public var timeout = 60
        /// The longest connected time, in seconds (1 to 7200).
        public var limit = 7200
        public var ringbackTone: String?
        public var eventURL: Callback?
        /// `machineDetection` / `advancedMachineDetection`: a phone or SIP endpoint only.
        public var machineDetection: MachineDetection?
        /// A phone endpoint's `onAnswer`: the NCCO at `url` runs on the answered leg (a whisper to the callee)
        /// before it joins the caller; `ringbackTone` plays to the caller until then.
        public var onAnswer: OnAnswer?
        public init(endpoint: CallEndpoint) { self.endpoint = endpoint }

        /// What the caller hears until the connected leg joins: the connect's `ringbackTone`, else its `onAnswer`'s.
        public var ringback: String? { ringbackTone ?? onAnswer?.ringbackTone }
    }

    public struct OnAnswer: Sendable, Hashable {
        public var url: String
        public var ringbackTone: String?
        public init(url: String, ringbackTone: String? = nil) {
            self.url = url
            self.ringbackTone = ringbackTone
        }
    }

    /// Pauses the NCCO for `timeout` seconds (0.1 to 7200, 10 by default), then goes on.
    public struct Wait: Sendable, Hashable {
        public var timeout: Double
        public init(timeout: Double = Self.defaultTimeout) { self.timeout = timeout }

        public static let defaultTimeout = 10.0
        /// As the Voice API's: a shorter or longer time is taken as the nearest of these.
        public static let timeouts = 0.1...7200.0
    }

    /// Sends `payload` to `eventURL`; the NCCO it answers replaces the rest.
    public struct Notify: Sendable, Hashable {
        public var payload: [String: JSONValue]
        public var eventURL: Callback
        public init(payload: [String: JSONValue], eventURL: Callback) {
            self.payload = payload
            self.eventURL = eventURL
        }
    }
}
