import Audio
import Foundation
import Wire

/// Runs one leg's NCCO: one action at a time, time passed in, webhooks and media as steps it returns.
///
/// The engine holds no I/O and no clock; its owner feeds it what happened (`mediaFinished`, `digits`,
/// `callbackAnswered`, `tick`, …) with the current time and runs the steps it returns, scheduling a `tick`
/// at `deadline`. A document is validated whole before anything of it runs: a bad one is answered with an
/// error step and a hangup, never half executed.
public struct NCCOEngine: Sendable {
    public enum Phase: Sendable, Equatable {
        /// Nothing loaded yet.
        case idle
        /// Playing media that ends by itself (talk, stream).
        case playing(bargeIn: Bool)
        /// Collecting DTMF or listening for speech for `input`.
        case collecting
        /// Waiting for a synchronous `record` to end (silence, its key, its time-out).
        case recording(endOnKey: Character?)
        /// Waiting for a webhook's answer (input result, notify, synchronous connect).
        case awaitingAnswer
        /// In a conversation until the leg hangs up or the conversation ends.
        case inConversation(endOnExit: Bool)
        /// Dialling a `connect` endpoint.
        case dialing(synchronous: Bool)
        /// Bridged to a connected leg until it hangs up.
        case bridged
        /// Pausing for a `wait` until `deadline`.
        case waiting
        /// The NCCO is done and the leg was asked to hang up.
        case finished
    }

    public private(set) var phase = Phase.idle
    /// When `tick` must be called next; nil when nothing is timed.
    public private(set) var deadline: Date?
    var pending: ArraySlice<NCCOAction> = []
    var input: NCCOAction.Input?
    var inputCallback: NCCOAction.Callback?
    var digits = ""
    /// Digits pressed during a barge-in talk, kept for the `input` after it.
    var earlyDigits = ""
    /// The input listens for speech (until a key is pressed or media reports what was said).
    var listening = false
    /// A talk or stream with `bargeIn` plays and the speech input after it already listens (the caller may speak
    /// over the prompt): that input does not start listening again.
    var listeningEarly = false
    var connect: NCCOAction.Connect?
    /// Since an asynchronous `input` ran: every key pressed is sent by itself to `keysListener` when the application
    /// registered one (`PUT /v1/calls/{uuid}/input/dtmf`), else to that input's event URL (nil: the application's).
    /// It lasts as long as the leg (another asynchronous input names another URL).
    var asynchronousKeys: NCCOAction.Callback??
    public private(set) var keysListener: NCCOAction.Callback?

    /// Seconds past a synchronous recording's time-out after which the NCCO goes on without its report.
    static let recordingGrace = 10
    /// Seconds past a speech input's own limits after which it is sent without a result.
    static let recognitionGrace = 10

    public init() {}

    /// Whether the leg is waiting on nothing timed and will stay until hung up.
    public var isFinished: Bool { phase == .finished }

    // MARK: Loading

    /// Validates `document` and runs it, replacing whatever the leg was doing (answer URL, transfer, or
    /// the NCCO a callback answered).
    public mutating func load(_ document: JSONValue, now: Date) -> [NCCOStep] {
        do {
            return load(try NCCO.parse(document), now: now)
        } catch {
            return fail(error)
        }
    }

    public mutating func load(_ ncco: NCCO, now: Date) -> [NCCOStep] {
        var steps: [NCCOStep] = []
        if case .playing = phase { steps.append(.stopMedia) }
        if case .dialing = phase { steps += stopRingback }
        if case .recording = phase { steps.append(.media(.stopRecording)) }
        if phase == .collecting { steps.append(.stopMedia) }
        pending = ncco.actions[...]
        reset()
        return steps + advance(now: now)
    }

    /// The error for an invalid document, then the hangup.
    mutating func fail(_ error: NCCOError) -> [NCCOStep] {
        var steps: [NCCOStep] = []
        if case .playing = phase { steps.append(.stopMedia) }
        if case .dialing = phase { steps += stopRingback }
        if case .recording = phase { steps.append(.media(.stopRecording)) }
        pending = []
        reset()
        phase = .finished
        return steps + [.error(error.description, code: error.code), .hangup]
    }

    mutating func reset() {
        input = nil
        listening = false
        listeningEarly = false
        inputCallback = nil
        digits = ""
        deadline = nil
        connect = nil
    }

    /// Starts the next action, or hangs up when none is left.
    mutating func advance(now: Date) -> [NCCOStep] {
        deadline = nil
        listening = false
        guard let action = pending.popFirst() else {
            phase = .finished
            return [.hangup]
        }
        switch action {
        case .talk(let t):
            phase = .playing(bargeIn: t.bargeIn)
            earlyDigits = ""
            return [.media(.say(t))] + listenEarly(t.bargeIn)
        case .stream(let s):
            phase = .playing(bargeIn: s.bargeIn)
            earlyDigits = ""
            return [.media(.play(s))] + listenEarly(s.bargeIn)
        case .input(let i) where i.asynchronous:
            // The keys come with the leg's audio (a ringing phone call is answered for them); the NCCO goes on.
            asynchronousKeys = .some(i.eventURL)
            return [.media(.collectDigits(i))] + advance(now: now)
        case .input(let i):
            phase = .collecting
            input = i
            inputCallback = i.eventURL
            digits = ""
            var steps: [NCCOStep] = []
            if i.dtmf { steps.append(.media(.collectDigits(i))) }
            if let speech = i.speech {
                listening = true
                if !listeningEarly { steps.append(.media(.collectSpeech(speech))) }
                listeningEarly = false
                // Media ends the listening itself (start timeout, silence, max duration); this is the guard should
                // it never report.
                deadline = now.addingTimeInterval(TimeInterval(speech.startTimeout + speech.maxDuration + Self.recognitionGrace))
            } else {
                deadline = now.addingTimeInterval(TimeInterval(i.timeOut))
            }
            let early = earlyDigits
            earlyDigits = ""
            if !early.isEmpty, i.dtmf { steps += self.digits(early, now: now) }
            return steps
        case .record(let r):
            // Without a condition that ends it, the recording runs beside the rest of the NCCO.
            guard r.isSynchronous else { return [.media(.startRecording(r))] + advance(now: now) }
            phase = .recording(endOnKey: r.endOnKey)
            // The recorder ends itself at its time-out; this is the guard should it never report.
            deadline = now.addingTimeInterval(TimeInterval(r.maxDuration + Self.recordingGrace))
            return [.media(.startRecording(r))]
        case .conversation(let c):
            phase = .inConversation(endOnExit: c.endOnExit)
            return [.joinConversation(c)]
        case .connect(let c):
            phase = .dialing(synchronous: c.synchronous)
            connect = c
            deadline = now.addingTimeInterval(TimeInterval(c.timeout))
            // The caller hears `ringbackTone` (or `onAnswer`'s) on repeat until the endpoint joins (silence without one).
            guard let tone = c.ringback else { return [.dial(c)] }
            var ringback = NCCOAction.Stream(url: tone)
            ringback.loop = 0
            return [.media(.play(ringback)), .dial(c)]
        case .notify(let n):
            phase = .awaitingAnswer
            return [.request(n.eventURL, payload: n.payload, awaitsAnswer: true)]
        case .wait(let w):
            phase = .waiting
            deadline = now.addingTimeInterval(w.timeout)
            return []
        }
    }

    // MARK: What happened

    /// The running talk or stream ended by itself.
    public mutating func mediaFinished(now: Date) -> [NCCOStep] {
        guard case .playing = phase else { return [] }
        return advance(now: now)
    }

    /// Media the action needs is not available: the error is reported and the NCCO goes on.
    public mutating func mediaFailed(_ reason: String, now: Date) -> [NCCOStep] {
        let steps: [NCCOStep] = [.error(reason, code: "media-unavailable")]
        switch phase {
        case .playing, .collecting, .recording: return steps + advance(now: now)
        default: return steps
        }
    }

    /// Where keys go, from now on, once an asynchronous input has run (nil: back to that input's event URL).
    public mutating func listenForKeys(_ callback: NCCOAction.Callback?) {
        keysListener = callback
    }

    /// DTMF from the leg: each key sent by itself after an asynchronous input, and whatever the running action does with them.
    public mutating func digits(_ pressed: String, now: Date) -> [NCCOStep] {
        var sent: [NCCOStep] = []
        if let target = asynchronousKeys {
            sent = pressed.map { .request(keysListener ?? target, payload: ["dtmf": ["digits": .string(String($0)), "timed_out": false]], awaitsAnswer: false) }
        }
        return sent + collect(pressed, now: now)
    }

    private mutating func collect(_ pressed: String, now: Date) -> [NCCOStep] {
        switch phase {
        case .playing(let bargeIn):
            guard bargeIn else { return [] }
            // Barge-in: the talk stops and the digits go to the input that follows (the stop ends any early
            // listening too: the input listens afresh, and the digits make it a keyed one).
            listeningEarly = false
            earlyDigits += pressed
            let carried = earlyDigits
            var steps: [NCCOStep] = [.stopMedia]
            steps += advance(now: now)
            if phase != .collecting { earlyDigits = "" } else { _ = carried }
            return steps
        case .collecting:
            guard let input, input.dtmf else { return [] }
            // A key pressed while listening for speech makes it a keyed input: the listening stops.
            var steps: [NCCOStep] = []
            if listening {
                listening = false
                steps.append(.stopMedia)
            }
            for d in pressed {
                if d == "#" && input.submitOnHash { return steps + submit(timedOut: false, now: now) }
                digits.append(d)
                if digits.count >= input.maxDigits { return steps + submit(timedOut: false, now: now) }
            }
            deadline = now.addingTimeInterval(TimeInterval(input.timeOut))
            return steps
        case .recording(let key):
            // The key ends the recording; the NCCO goes on once the recorder has finished the file.
            guard let key, pressed.contains(key) else { return [] }
            return [.media(.stopRecording)]
        default:
            return []
        }
    }

    /// The synchronous recording ended: the NCCO goes on.
    public mutating func recordingFinished(now: Date) -> [NCCOStep] {
        guard case .recording = phase else { return [] }
        return advance(now: now)
    }

    /// What listening for speech on the leg came to: the input is sent with it.
    public mutating func speechFinished(_ outcome: SpeechOutcome, now: Date) -> [NCCOStep] {
        if case .playing = phase, listeningEarly {
            // Listening over a prompt. Silence until then is no answer yet: the input listens afresh when it starts.
            guard outcome.timeoutReason != SpeechEndpointer.Ending.startTimeout.rawValue else {
                listeningEarly = false
                return []
            }
            // An utterance whose report overtook its onset's (media stopped the prompt at the onset): the input takes it.
            let steps = advance(now: now)
            return phase == .collecting ? steps + submit(timedOut: false, speech: outcome, now: now) : steps
        }
        guard phase == .collecting, listening else { return [] }
        return submit(timedOut: false, speech: outcome, now: now)
    }

    /// The caller began speaking over a prompt with `bargeIn` (media has stopped it): the input after it, already
    /// listening, takes over.
    public mutating func speechStarted(now: Date) -> [NCCOStep] {
        guard case .playing(true) = phase, listeningEarly else { return [] }
        return advance(now: now)
    }

    /// With `bargeIn`, a speech input right after the prompt listens from the prompt's start.
    mutating func listenEarly(_ bargeIn: Bool) -> [NCCOStep] {
        guard bargeIn, case .input(let next)? = pending.first, let speech = next.speech else { return [] }
        listeningEarly = true
        return [.media(.collectSpeech(speech, bargeIn: true))]
    }

    /// Sends the collected digits (and what was said) to the input's URL; its answer replaces the rest of the NCCO.
    mutating func submit(timedOut: Bool, speech: SpeechOutcome? = nil, now: Date) -> [NCCOStep] {
        let payload: [String: JSONValue] = ["dtmf": ["digits": .string(digits), "timed_out": .bool(timedOut)],
                                            "speech": speech?.json ?? ["results": []]]
        let callback = inputCallback
        phase = .awaitingAnswer
        deadline = nil
        input = nil
        listening = false
        return [.stopMedia, .request(callback, payload: payload, awaitsAnswer: true)]
    }

    /// The answer of an awaited webhook: an NCCO replaces the rest; anything else lets the rest run.
    public mutating func callbackAnswered(_ reply: JSONValue?, now: Date) -> [NCCOStep] {
        guard phase == .awaitingAnswer else { return [] }
        return goOn(reply, now: now)
    }

    /// Time passed: an input's silence ran out, or a connect was not answered in time.
    public mutating func tick(now: Date) -> [NCCOStep] {
        guard let deadline, now >= deadline else { return [] }
        switch phase {
        case .collecting:
            // Still listening: media never reported (the guard past the speech's own limits).
            if listening { return submit(timedOut: false, speech: SpeechOutcome(error: "no result from speech recognition"), now: now) }
            return submit(timedOut: true, now: now)
        case .recording: return [.media(.stopRecording)] + advance(now: now)
        case .waiting: return advance(now: now)
        case .dialing(let synchronous):
            self.deadline = nil
            // Unanswered: the owner cancels the dialled leg (`timeout`) and the NCCO goes on — for a synchronous
            // connect once the connect's event URL has answered that leg's `timeout` (`dialFailed`).
            let timedOut: [NCCOStep] = stopRingback + [.error("connect: no answer within \(connect?.timeout ?? 0) s", code: "connect-timeout")]
            return synchronous ? timedOut : timedOut + advance(now: now)
        default:
            self.deadline = nil
            return []
        }
    }

    /// The dialled leg answered: the two legs are bridged.
    public mutating func dialAnswered(now: Date) -> [NCCOStep] {
        guard case .dialing = phase else { return [] }
        phase = .bridged
        deadline = nil
        return stopRingback
    }

    /// The dialled leg answered but joins later (its `onAnswer` whisper runs first): no answer timeout any more.
    public mutating func calleeAnswered() {
        guard case .dialing = phase else { return }
        deadline = nil
    }

    /// Ends the ringing connect's ringback tone, if it plays one.
    var stopRingback: [NCCOStep] { connect?.ringback != nil ? [.stopMedia] : [] }

    /// The dialled leg failed (busy, rejected, unanswered, no trunk): the NCCO goes on with its next action,
    /// or with `answer`, an NCCO the connect's event URL answered that leg's status with (a synchronous
    /// connect's fallback), in place of the rest.
    public mutating func dialFailed(now: Date, answer: JSONValue? = nil) -> [NCCOStep] {
        guard case .dialing = phase else { return [] }
        if let answer, case .array = answer { return load(answer, now: now) }  // `load` stops the ringback
        return stopRingback + advance(now: now)
    }

    /// The connected leg hung up: the NCCO goes on, or with `answer` in place of the rest (a synchronous
    /// connect's event URL answered a websocket's `disconnected`). One that ended answered but before it was
    /// bridged (its machine detection held the bridge, then hung up on a machine) failed the connect.
    public mutating func bridgeEnded(now: Date, answer: JSONValue? = nil) -> [NCCOStep] {
        if case .dialing = phase { return dialFailed(now: now, answer: answer) }
        guard phase == .bridged else { return [] }
        return goOn(answer, now: now)
    }

    /// The next action, or `answer` when it is an NCCO (validated whole first, as any NCCO).
    private mutating func goOn(_ answer: JSONValue?, now: Date) -> [NCCOStep] {
        if let answer, case .array = answer { return load(answer, now: now) }
        return advance(now: now)
    }

    /// The conversation this leg is in ended (a leg with `endOnExit` left): this leg hangs up.
    public mutating func conversationEnded(now: Date) -> [NCCOStep] {
        guard case .inConversation = phase else { return [] }
        phase = .finished
        return [.hangup]
    }

    /// The leg is ending from outside (hangup, far end): nothing more runs.
    public mutating func stop() -> [NCCOStep] {
        let wasPlaying: Bool
        switch phase {
        case .playing, .collecting: wasPlaying = true
        case .dialing: wasPlaying = connect?.ringback != nil
        default: wasPlaying = false
        }
        phase = .finished
        pending = []
        reset()
        return wasPlaying ? [.stopMedia] : []
    }
}
