import Audio
import Foundation
import Media
import Synchronization
import Wire

/// `CallMedia` over conversation mixers: NCCO `talk`, `stream` and `record` for legs that are
/// members of a conversation whose room mixes (app legs today; SIP legs join the same mix once the
/// telephony edge bridges them). A talk or stream plays into the mix heard only by the leg's own
/// participants and reports `mediaFinished` when it ends; a recording records the conversation's mix
/// (with `split`, what the leg says and hears on two channels) and reports its URL, size and times to
/// the record action's event URL.
public final class MixerCallMedia: CallMedia {
    /// A leg's conversation and member.
    public struct LegPlace: Sendable {
        public var conversationID: String
        public var memberID: String
        public var applicationID: String
        public init(conversationID: String, memberID: String, applicationID: String) {
            self.conversationID = conversationID
            self.memberID = memberID
            self.applicationID = applicationID
        }
    }

    private struct Attached: Sendable {
        var audio: ConversationAudio?
        var rooms: Rooms?
        weak var events: (any CallMediaEvents)?
    }

    private let attached = Mutex(Attached())
    /// The talk or stream playing into each leg.
    private let playing = Mutex<[String: PlayerID]>([:])
    /// Where each leg's synchronous recording is (the NCCO waits for it).
    private enum Waiting { case starting, stopRequested, running(RecordingID) }
    private let waiting = Mutex<[String: Waiting]>([:])
    /// Music on hold playing in each conversation whose moderator has not joined.
    private let hold = Mutex<[String: PlayerID]>([:])
    /// Conversations being recorded for `conversation` with `record: true`.
    private let recorded = Mutex<Set<String>>([])
    private let resolve: @Sendable (String) -> LegPlace?
    private let recordingURL: @Sendable (RecordingID) -> String
    private let fallback = NoCallMedia()
    /// Speech input listening to a leg through its conversation's mix, by leg (`stop(leg:)` cancels it).
    private let listening = Mutex<[String: Task<Void, Never>]>([:])
    /// Reads speech inputs' utterances, for these legs and the phone lines'.
    public let recognizer: SpeechRecognizer

    public init(resolve: @escaping @Sendable (String) -> LegPlace?, recordingURL: @escaping @Sendable (RecordingID) -> String,
                recognizer: SpeechRecognizer = SpeechRecognizer(workers: 2)) {
        self.resolve = resolve
        self.recordingURL = recordingURL
        self.recognizer = recognizer
    }

    /// Connects the mixers and the calls once both exist (they are built around each other).
    public func attach(audio: ConversationAudio, rooms: Rooms, events: any CallMediaEvents) {
        attached.withLock { $0 = Attached(audio: audio, rooms: rooms, events: events) }
    }

    public func perform(_ command: CallMediaCommand, leg: String) throws(CallMediaError) {
        switch command {
        case .say(let talk):
            let request = SpeechRequest(text: talk.text, language: talk.language, style: talk.style)
            do { _ = try SpeechSynthesizer.plan(request) } catch { throw .failed("talk: \(error)") }
            try play(.speech(request), options: PlayerOptions(loop: talk.loop, level: talk.level), leg: leg)
        case .play(let stream):
            try play(.url(stream.url), options: PlayerOptions(loop: stream.loop, level: stream.level), leg: leg)
        case .startRecording(let record):
            try startRecording(record, leg: leg)
        case .stopRecording:
            stopRecording(leg: leg)
        case .collectSpeech(let speech, let bargeIn):
            try listenForSpeech(speech, bargeIn: bargeIn, leg: leg)
        case .sendDigits(let digits):
            try playKeys(digits, leg: leg)
        case .recordConversation(let record):
            let (place, _, _) = try place(leg)
            guard recorded.withLock({ $0.insert(place.conversationID).inserted }) else { return }
            try startRecording(record, leg: leg, conversationWide: true)
        default:
            try fallback.perform(command, leg: leg)
        }
    }

    public func stop(leg: String) {
        listening.withLock { $0.removeValue(forKey: leg) }?.cancel()
        stopPlaying(leg: leg)
    }

    /// Stops the talk or stream playing into the leg (a speech input with `bargeIn` goes on listening).
    public func stopPlaying(leg: String) {
        guard let id = playing.withLock({ $0.removeValue(forKey: leg) }), let audio = attached.withLock({ $0.audio }) else { return }
        Task { await audio.stop(id) }
    }

    public func release(leg: String) { stop(leg: leg) }

    // MARK: Work

    private func place(_ leg: String) throws(CallMediaError) -> (LegPlace, ConversationAudio, Rooms) {
        let (audio, rooms) = attached.withLock { ($0.audio, $0.rooms) }
        guard let audio, let rooms else { throw .unavailable("the audio mixer is not running") }
        guard let place = resolve(leg) else { throw .unavailable("leg \(leg) is in no conversation") }
        return (place, audio, rooms)
    }

    private func play(_ source: PlayerSource, options: PlayerOptions, leg: String) throws(CallMediaError) {
        let (place, audio, rooms) = try place(leg)
        stop(leg: leg)
        Task {
            var options = options
            let listeners = await Self.listeners(of: place, rooms: rooms)
            options.heardBy = listeners
            do {
                guard !listeners.isEmpty else { throw ConversationAudio.Failure.notMixing(place.conversationID) }
                let id = try await audio.play(source, conversationID: place.conversationID, options: options) { id, end in
                    let current = self.playing.withLock { p -> Bool in
                        guard p[leg] == id else { return false }
                        p[leg] = nil
                        return true
                    }
                    // A stopped player was replaced or stopped by the call itself: it reports nothing.
                    if current, end != .stopped { self.events()?.mediaFinished(leg: leg) }
                }
                self.playing.withLock { $0[leg] = id }
            } catch {
                // Nothing to play into: the action ends as it would after playing, so the NCCO goes on.
                self.events()?.mediaFinished(leg: leg)
            }
        }
    }

    /// Keys sent to a leg whose audio is its client's (an app leg): in-band DTMF that only the leg hears, beside
    /// whatever else plays to it (a talk or stream goes on).
    private func playKeys(_ digits: String, leg: String) throws(CallMediaError) {
        let (place, audio, rooms) = try place(leg)
        let keys = ToneCadence.keys(digits)
        Task {
            let listeners = await Self.listeners(of: place, rooms: rooms)
            guard !listeners.isEmpty else { return }
            _ = try? await audio.play(.tone(keys, milliseconds: keys.cycleMilliseconds), conversationID: place.conversationID,
                                      options: PlayerOptions(heardBy: listeners))
        }
    }

    /// Speech input on a leg whose audio reaches its conversation's mix from its client (an app leg), or on any leg
    /// listening to another leg of its conversation (`speech.uuid`): a tap of that voice, drained every 100 ms into the
    /// endpointer (silence filling any time the mix did not run), then the utterance is kept and recognised off the
    /// mixer's thread. What it comes to goes to `leg`'s input.
    private func listenForSpeech(_ speech: NCCOAction.Input.Speech, bargeIn: Bool, leg: String) throws(CallMediaError) {
        do { try SpeechRecognizer.validate(language: speech.language) } catch { throw .failed(error.description) }
        let (place, audio, rooms) = try place(leg)
        let voice = try speaker(speech, of: leg, in: place)
        let settings = speech.endpointing
        let task = Task {
            let outcome: SpeechOutcome
            do throws(CallMediaError) {
                let (ending, samples) = try await Self.utterance(of: voice, audio: audio, rooms: rooms, settings: settings, tap: MixerTapID("speech-\(UUID().uuidString)")) {
                    // Over a prompt with `bargeIn`: the caller's first words stop it.
                    guard bargeIn, !Task.isCancelled else { return }
                    self.stopPlaying(leg: leg)
                    self.events()?.speechStarted(leg: leg)
                }
                outcome = await SpeechOutcome.of(ending, samples: samples, rate: Self.tapRate, speech: speech, recognizer: recognizer) {
                    (samples) throws(CallMediaError) in try self.keepUtterance(samples, rate: Self.tapRate, leg: leg)
                }
            } catch {
                outcome = SpeechOutcome(error: error.description)
            }
            // Stopped meanwhile (a key, a new NCCO): nobody waits for it. Otherwise the input's submission stops it.
            guard !Task.isCancelled else { return }
            events()?.speechFinished(outcome, leg: leg)
        }
        listening.withLock { $0.updateValue(task, forKey: leg) }?.cancel()
    }

    /// Mixer taps run at 48 kHz.
    static let tapRate = 48_000

    /// Where the voice a speech input listens to is: the leg's own, or the one leg `speech.uuid` names, which must be
    /// in the leg's conversation (so an NCCO hears only the call it runs in).
    private func speaker(_ speech: NCCOAction.Input.Speech, of leg: String, in place: LegPlace) throws(CallMediaError) -> LegPlace {
        guard let other = speech.uuid.first, other != leg else { return place }
        guard let voice = resolve(other), voice.conversationID == place.conversationID else {
            throw .failed("input: speech.uuid \(other) is not a leg of this conversation")
        }
        return voice
    }

    /// Listens to what the leg says in its conversation's mix until the endpointer ends (or the task is cancelled).
    /// `tap` is this listening's own (a cancelled one may still be removing its tap when the next one adds its).
    private static func utterance(of place: LegPlace, audio: ConversationAudio, rooms: Rooms, settings: SpeechEndpointer.Settings,
                                  tap: MixerTapID, onStart: () -> Void) async throws(CallMediaError) -> (SpeechEndpointer.Ending, [Int16]) {
        guard let participant = await listeners(of: place, rooms: rooms).first else { throw .failed("input: the leg is not in its conversation's mix") }
        let mixer: MixerID
        do { mixer = try await audio.mixer(place.conversationID) } catch { throw .failed("input: \(error)") }
        let engine = audio.recordings.engine
        do { try await engine.addMixerTap(mixer, tap, participant: participant, split: true, frames: 100) } catch { throw .failed("input: \(error)") }
        var endpointer = SpeechEndpointer(rate: tapRate, settings: settings)
        let perFrame = tapRate / 50
        var frame = [Int16](repeating: 0, count: perFrame)
        let silence = [Int16](repeating: 0, count: perFrame)
        let start = ContinuousClock.now
        var fed = 0
        var ending: SpeechEndpointer.Ending?
        while ending == nil, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(100))
            guard let drained = try? await engine.drainMixerTap(mixer, tap) else { break }
            let channels = max(1, drained.channels)
            var offset = 0
            // The leg's voice is the split tap's first channel.
            while ending == nil, offset + perFrame * channels <= drained.samples.count {
                for i in 0..<perFrame { frame[i] = drained.samples[offset + i * channels] }
                let wasSpeaking = endpointer.speaking
                ending = frame.withUnsafeBufferPointer { endpointer.feed($0) }
                if !wasSpeaking, endpointer.speaking { onStart() }
                offset += perFrame * channels
                fed += 1
            }
            // Ticks the mix skipped (nobody sent audio) count as silence, so the timeouts keep the clock's time.
            let due = Int((ContinuousClock.now - start) / .milliseconds(20)) - 5
            while ending == nil, fed < due {
                ending = silence.withUnsafeBufferPointer { endpointer.feed($0) }
                fed += 1
            }
        }
        try? await engine.removeMixerTap(mixer, tap)
        guard let ending else { throw .failed("input: the conversation's mix ended") }
        return (ending, endpointer.takeSamples())
    }

    /// Keeps what a leg said to its speech input (`saveAudio`) as a recording of the leg's application; returns its URL.
    public func keepUtterance(_ samples: [Int16], rate: Int, leg: String) throws(CallMediaError) -> String {
        let (place, audio, _) = try place(leg)
        do {
            return recordingURL(try audio.recordings.keep(samples, rate: rate, source: leg, applicationID: place.applicationID).id)
        } catch {
            throw .failed("saveAudio: \(error)")
        }
    }

    private func startRecording(_ record: NCCOAction.Record, leg: String, conversationWide: Bool = false) throws(CallMediaError) {
        let (place, audio, rooms) = try place(leg)
        // Once it has ended (or failed to start): the leg no longer waits on it, the conversation may be recorded again.
        let done: @Sendable () -> Void = {
            if record.isSynchronous { self.waiting.withLock { _ = $0.removeValue(forKey: leg) } }
            if conversationWide { _ = self.recorded.withLock { $0.remove(place.conversationID) } }
        }
        if record.split && record.format != .wav { throw .failed("record: split conversation is recorded as wav") }
        if record.isSynchronous { waiting.withLock { $0[leg] = .starting } }
        let url = recordingURL
        Task {
            let listeners = await Self.listeners(of: place, rooms: rooms)
            // The call as a whole (everyone the leg talks with, and the leg) unless split asks for the leg's two directions,
            // or, with 3 or more channels, a channel for each leg (this one first).
            let split = record.split && !listeners.isEmpty
            let perLeg = record.split && record.channels >= 3
            var options = RecordingOptions(format: AudioFileKind(rawValue: record.format.rawValue) ?? .mp3,
                                           participant: split || perLeg ? listeners.first : nil, split: split && !perLeg,
                                           endOnSilence: record.endOnSilence, timeOut: record.maxDuration, beepStart: record.beepStart)
            if perLeg { options.channels = record.channels }
            options.beepHeardBy = listeners.isEmpty ? nil : listeners
            let info: RecordingInfo
            do throws(ConversationAudio.Failure) {
                info = try await audio.record(conversationID: place.conversationID, applicationID: place.applicationID, options: options) { info in
                    done()
                    let formatter = ISO8601DateFormatter()
                    var fields: [String: JSONValue] = [
                        "recording_url": .string(url(info.id)), "recording_uuid": .string(info.id.rawValue),
                        "size": .number(Double(info.size)), "start_time": .string(formatter.string(from: info.startTime)),
                        "conversation_uuid": .string(place.conversationID),
                    ]
                    if let end = info.endTime { fields["end_time"] = .string(formatter.string(from: end)) }
                    self.events()?.recordingFinished(leg: leg, record: record, fields: fields)
                }
            } catch {
                done()
                events()?.recordingFailed(leg: leg, record: record, reason: "\(error)")
                return
            }
            guard record.isSynchronous else { return }
            // Its key may have been pressed while it started.
            let stopNow = waiting.withLock { w -> Bool in
                guard let state = w[leg] else { return false }
                if case .stopRequested = state { return true }
                w[leg] = .running(info.id)
                return false
            }
            if stopNow { await audio.recordings.stop(info.id) }
        }
    }

    /// Loops `url` into the conversation (once, however many attendees wait) and returns its participant, for
    /// the waiting lines to hear; nil when it cannot play (the attendees then wait in silence).
    public func startHoldMusic(_ url: String, conversationID: String) async -> MixerParticipantID? {
        guard let audio = attached.withLock({ $0.audio }) else { return nil }
        if let id = hold.withLock({ $0[conversationID] }) { return id.participant }
        guard let id = try? await audio.play(.url(url), conversationID: conversationID, options: PlayerOptions(loop: 0), ended: { id, _ in
            self.hold.withLock { h in if h[conversationID] == id { h[conversationID] = nil } }
        }) else { return nil }
        let kept = hold.withLock { h -> PlayerID in
            if let other = h[conversationID] { return other }
            h[conversationID] = id
            return id
        }
        if kept != id { await audio.stop(id) }
        return kept.participant
    }

    /// The conversation's music on hold, when it plays.
    public func holdMusic(conversationID: String) -> MixerParticipantID? { hold.withLock { $0[conversationID]?.participant } }

    public func stopHoldMusic(conversationID: String) async {
        guard let id = hold.withLock({ $0.removeValue(forKey: conversationID) }), let audio = attached.withLock({ $0.audio }) else { return }
        await audio.stop(id)
    }

    /// Ends the leg's synchronous recording; the recorder reports it as it finishes the file.
    private func stopRecording(leg: String) {
        let id = waiting.withLock { w -> RecordingID? in
            switch w[leg] {
            case .running(let id): return id
            case .starting: w[leg] = .stopRequested
            case .stopRequested, nil: break
            }
            return nil
        }
        guard let id, let audio = attached.withLock({ $0.audio }) else { return }
        Task { await audio.recordings.stop(id) }
    }

    private func events() -> (any CallMediaEvents)? { attached.withLock { $0.events } }

    /// The leg's participants in its conversation's mix, which mixes from now on. An app leg's client
    /// publishes its microphone just after the call starts, so its participant is awaited a moment.
    public static func listeners(of place: LegPlace, rooms: Rooms, wait: Duration = .seconds(3)) async -> [MixerParticipantID] {
        await rooms.requireMix(conversationID: place.conversationID)
        let deadline = ContinuousClock.now + wait
        while true {
            let found = await rooms.mixerParticipants(conversationID: place.conversationID, memberID: place.memberID)
            if !found.isEmpty || ContinuousClock.now >= deadline { return found }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }
}
