import Audio
import Crypto
import Foundation
import Live
import Media
import Platform
import Runtime
import Synchronization
import Wire

/// Live captions of video sessions (`POST /v2/project/{id}/captions`): while they run, the audio of every
/// stream whose publisher asked for captions (`video:publishCaptions`; a stream the server publishes, a SIP
/// call's, always) is transcribed as it is spoken, and each caption goes to the connections that asked for
/// that stream's (`video:captionReceived`). One captioning per session, up to 50 streams at once, and at most
/// `maxVoices` (`--captions-max-voices`) streams of every session together: one beyond it waits for a place.
///
/// Each stream is heard alone, by a participant of the session's audio mix (as a manual archive's is), tapped
/// at 48 kHz and fed to a `CaptionTranscriber` of its own on the captioning's recognition thread (off the
/// media workers and the cooperative pool: the decoder's search costs about an eighth of real time); the
/// session's transcribers share one language model (`CaptionModel`), read when the first voice needs it.
/// Captions stop when asked, after `maxDuration`, or when the session's last client leaves; each status
/// (`started`, `stopped`, `failed`) is POSTed to the start's `statusCallbackUrl` and the application's
/// `captions_status` webhook. A restart ends them, as it ends the session's connections: each running captioning
/// is a JSON file under `directory` (written before the start is acknowledged, removed when it ends), and one
/// left there by a server that stopped is reported `failed` when the next one starts.
final class VideoCaptions: Sendable {
    struct Captions: Codable, Sendable, Equatable {
        enum Status: String, Codable, Sendable { case started, stopped, failed }
        var id: String
        var sessionID: String
        var projectID: String
        var languageCode: String
        var maxDuration: Int
        var partialCaptions: Bool
        var statusCallbackURL: String?
        var createdAt: Int64
        var updatedAt: Int64
        var status = Status.started
        var reason = ""
    }

    /// A start's fields, checked whole before anything starts.
    struct Request: Equatable {
        var sessionID: String
        var token: String
        var languageCode = "en-US"
        var maxDuration = 14_400
        var partialCaptions = true
        var statusCallbackURL: String?

        static let durations = 300...14_400

        init(_ body: JSONValue) throws(APIError) {
            guard let sessionID = body["sessionId"]?.stringValue, !sessionID.isEmpty else { throw .badRequest("sessionId is required.") }
            guard let token = body["token"]?.stringValue, !token.isEmpty else { throw .badRequest("token is required.") }
            self.sessionID = sessionID
            self.token = token
            switch body["languageCode"] {
            case nil, .null?: break
            case .string(let code)?:
                do { try SpeechRecognizer.validate(language: code) } catch {
                    throw .badRequest("languageCode \(code) is not served: captions are recognised in English only (en-US, en-GB…).",
                                      code: "unsupported-option")
                }
                languageCode = code
            default: throw .badRequest("languageCode must be a string.")
            }
            switch body["maxDuration"] {
            case nil, .null?: break
            case .number(let n)? where n == n.rounded() && Self.durations.contains(Int(n)): maxDuration = Int(n)
            default: throw .badRequest("maxDuration must be a whole number of seconds from 300 to 14400.")
            }
            // The `opentok` SDK sends a boolean, the Video API's reference a string.
            switch body["partialCaptions"] {
            case nil, .null?: break
            case .bool(let on)?: partialCaptions = on
            case .string("true")?: partialCaptions = true
            case .string("false")?: partialCaptions = false
            default: throw .badRequest("partialCaptions must be true or false.")
            }
            switch body["statusCallbackUrl"] {
            case nil, .null?: break
            case .string(let url)? where (15...2048).contains(url.count) && Application.isWebAddress(url): statusCallbackURL = url
            default: throw .badRequest("statusCallbackUrl must be an http(s) URL of 15 to 2048 characters.")
            }
        }
    }

    /// The captionings running, by id, each with why it should stop once asked to (`stop`, `sessionEnded`).
    private let running = Mutex<[String: (captions: Captions, stop: String?)]>([:])
    let directory: String
    /// Voices captioned now, all sessions together, and the most there may be.
    private let voicesInUse = Atomic<Int>(0)
    let maxVoices: Int
    let hub: VideoHub
    let engine: MediaEngine
    let model: String
    /// Each status change, for the callbacks.
    let changed: @Sendable (Captions) -> Void

    /// Reports the captionings a stopped server left running as `failed` (to `changed`).
    init(directory: String, hub: VideoHub, engine: MediaEngine, model: String = SpeechRecognizer.defaultModel, maxVoices: Int = 64,
         changed: @escaping @Sendable (Captions) -> Void) {
        self.directory = directory
        self.maxVoices = maxVoices
        self.hub = hub
        self.engine = engine
        self.model = model
        self.changed = changed
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.hasSuffix(".json") {
            let path = directory + "/" + name
            if let data = FileManager.default.contents(atPath: path), var left = try? JSONDecoder().decode(Captions.self, from: data) {
                left.status = .failed
                left.reason = "the server stopped while captioning"
                left.updatedAt = VideoArchives.millis()
                changed(left)
            }
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// Captions running now, and the voices they transcribe, for `/metrics`.
    var count: Int { running.withLock { $0.count } }
    var voices: Int { voicesInUse.load(ordering: .relaxed) }

    /// Starts captioning `sessionID` (checked by the caller: a routed session of `project`); 409 when it is captioned already.
    func start(_ ask: Request, project: String) throws(APIError) -> Captions {
        let now = VideoArchives.millis()
        let captions = Captions(id: UUID4.generate(), sessionID: ask.sessionID, projectID: project, languageCode: ask.languageCode,
                                maxDuration: ask.maxDuration, partialCaptions: ask.partialCaptions, statusCallbackURL: ask.statusCallbackURL,
                                createdAt: now, updatedAt: now)
        let started = running.withLock { r -> Bool in
            guard !r.values.contains(where: { $0.captions.sessionID == ask.sessionID }) else { return false }
            r[captions.id] = (captions, nil)
            return true
        }
        guard started else { throw .conflict("Live captions have already started for this session.", code: "captions-in-progress") }
        guard VideoArchives.saveJSON(captions, id: captions.id, directory: directory) else {
            running.withLock { $0[captions.id] = nil }
            throw .unavailable("The captions could not be saved, so they were not started.")
        }
        changed(captions)
        Task.detached { [self] in await self.caption(captions) }
        return captions
    }

    /// Stops a running captioning of `project`; false when there is none with that id (or it is already stopping).
    func stop(id: String, project: String) -> Bool {
        running.withLock { r in
            guard let run = r[id], run.captions.projectID == project, run.stop == nil else { return false }
            r[id]?.stop = "user initiated"
            return true
        }
    }

    /// The session's last client left: its captions stop.
    func sessionEnded(_ sessionID: String) {
        running.withLock { r in
            for (id, run) in r where run.captions.sessionID == sessionID { r[id]?.stop = run.stop ?? "session ended" }
        }
    }

    /// One stream being captioned: its own participant of the session's mix, tapped, and its transcriber.
    private struct Voice: Sendable {
        var holder: String
        var mix: HeldMix
        var transcriber: CaptionTranscriber
    }

    /// Captions the session until stopped: every 100 ms, the streams to caption are looked at again, and what
    /// each said meanwhile is transcribed.
    private func caption(_ captions: Captions) async {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(captions.maxDuration)
        let thread = DispatchQueue(label: "switchboard.captions.\(captions.id)")
        var voices: [String: Voice] = [:]
        var language: CaptionModel?
        /// Streams whose participant could not be made (their media not there yet), and when to try again.
        var retry: [String: ContinuousClock.Instant] = [:]
        var failure: String?
        var reason = "maximum duration exceeded"
        while clock.now < deadline {
            if let asked = running.withLock({ $0[captions.id]?.stop }) {
                reason = asked
                break
            }
            let wanted = hub.streams(sessionID: captions.sessionID).filter(\.publishCaptions).prefix(VideoHub.Limits.captionedStreams).map(\.id)
            for (id, voice) in voices where !wanted.contains(id) {
                await release(voice, captions: captions, streamID: id, flush: true)
                voices[id] = nil
            }
            for id in wanted where voices[id] == nil && retry[id].map({ $0 <= clock.now }) != false && reserveVoice() {
                do {
                    voices[id] = try await listen(to: id, captions: captions, language: &language, on: thread)
                    retry[id] = nil
                } catch let error as RecognitionError {
                    voicesInUse.subtract(1, ordering: .relaxed)
                    failure = "\(error)"
                } catch {
                    voicesInUse.subtract(1, ordering: .relaxed)
                    retry[id] = clock.now + .seconds(1)
                }
            }
            retry = retry.filter { wanted.contains($0.key) }
            if failure != nil { break }
            for (id, voice) in voices {
                guard let drained = try? await engine.drainMixerTap(voice.mix.mixer, MixerTapID(voice.holder)), !drained.samples.isEmpty else { continue }
                let transcriber = voice.transcriber
                let made: [CaptionTranscriber.Caption] = await withCheckedContinuation { done in
                    thread.async {
                        var out: [CaptionTranscriber.Caption] = []
                        let n = SampleRate.hz48000.samplesPerFrame
                        for start in stride(from: 0, to: drained.samples.count - n + 1, by: n) {
                            guard let frame = try? AudioFrame(rate: .hz48000, samples: Array(drained.samples[start..<start + n])) else { continue }
                            out += transcriber.feed(frame)
                        }
                        done.resume(returning: out)
                    }
                }
                for c in made { hub.deliverCaption(sessionID: captions.sessionID, streamID: id, text: c.text, isFinal: c.isFinal) }
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        for (id, voice) in voices { await release(voice, captions: captions, streamID: id, flush: failure == nil) }
        var ended = captions
        ended.status = failure == nil ? .stopped : .failed
        ended.reason = failure ?? reason
        ended.updatedAt = VideoArchives.millis()
        running.withLock { $0[captions.id] = nil }
        try? FileManager.default.removeItem(atPath: directory + "/" + captions.id + ".json")
        changed(ended)
    }

    /// A participant of the session's mix that hears only `streamID`, tapped, and a transcriber for it, made on
    /// `thread` (the first of a session reads `language`, about half a second).
    private func listen(to streamID: String, captions: Captions, language: inout CaptionModel?, on thread: DispatchQueue) async throws -> Voice {
        let holder = "captions-\(captions.id)-\(streamID)"
        let mix = try await hub.holdAudioMix(sessionID: captions.sessionID, holder: holder, hearing: [streamID])
        do {
            try await engine.addMixerTap(mix.mixer, MixerTapID(holder), participant: mix.listener, frames: 250)
            let (partials, model, shared) = (captions.partialCaptions, self.model, language)
            let made: Result<(CaptionTranscriber, CaptionModel), RecognitionError> = await withCheckedContinuation { done in
                thread.async {
                    done.resume(returning: Result { () throws(RecognitionError) in
                        let language: CaptionModel
                        if let shared { language = shared } else { language = try CaptionModel(model: model) }
                        return (try CaptionTranscriber(partials: partials, language: language), language)
                    })
                }
            }
            let (transcriber, read) = try made.get()
            language = read
            return Voice(holder: holder, mix: mix, transcriber: transcriber)
        } catch {
            try? await engine.removeMixerTap(mix.mixer, MixerTapID(holder))
            await hub.releaseAudioMix(sessionID: captions.sessionID, holder: holder)
            throw error
        }
    }

    /// A place for one more voice, if the server's limit leaves one.
    private func reserveVoice() -> Bool {
        var now = voicesInUse.load(ordering: .relaxed)
        while now < maxVoices {
            let (exchanged, seen) = voicesInUse.compareExchange(expected: now, desired: now + 1, ordering: .relaxed)
            if exchanged { return true }
            now = seen
        }
        return false
    }

    /// Lets a stream's participant go (and its place); with `flush`, what it was saying when it went is a last caption.
    private func release(_ voice: Voice, captions: Captions, streamID: String, flush: Bool) async {
        voicesInUse.subtract(1, ordering: .relaxed)
        try? await engine.removeMixerTap(voice.mix.mixer, MixerTapID(voice.holder))
        await hub.releaseAudioMix(sessionID: captions.sessionID, holder: voice.holder)
        if flush, let last = voice.transcriber.finish() {
            hub.deliverCaption(sessionID: captions.sessionID, streamID: streamID, text: last.text, isFinal: true)
        }
    }
}
