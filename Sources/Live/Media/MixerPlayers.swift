import Audio
import Foundation
import Media
import Runtime

/// Players in mixers: speech, files (local or fetched over http(s)) and tones, each a `.frames`
/// participant fed through `MediaEngine.queueFrames` by a task that paces itself on the room the
/// queue reports, so memory stays bounded by one batch whatever the source's length. Synthesis runs
/// on the synthesizer's pool and fetches on the HTTP client's loops; the worker's tick only plays
/// what is queued. Everything a source can get wrong (language, URL, undecodable file) is found
/// before `start` returns and thrown as a `PlayerError`.
public actor MixerPlayers {
    public struct Limits: Sendable {
        /// The largest file a URL may return.
        public var maxDownloadBytes = 32 << 20
        /// The longest a fetch may take.
        public var fetchTimeout: Duration = .seconds(15)
        /// The longest a tone plays.
        public var maxToneMilliseconds = 600_000
        public init() {}
    }

    /// Frames queued ahead of the tick (1 s), and how many the feeder tops up at a time.
    static let queueFrames = 50
    static let batchFrames = 25

    let engine: MediaEngine
    let synthesizer: SpeechSynthesizer
    let http: HTTPClient?
    let downloads: String
    let limits: Limits
    private var running: [PlayerID: (mixer: MixerID, task: Task<Void, Never>)] = [:]

    /// `downloads`: where fetched files are kept while they play (created if missing).
    public init(engine: MediaEngine, synthesizer: SpeechSynthesizer, http: HTTPClient?, downloads: String, limits: Limits = Limits()) {
        self.engine = engine
        self.synthesizer = synthesizer
        self.http = http
        self.downloads = downloads
        self.limits = limits
    }

    /// Starts `source` in `mixer`; `ended` is called once, when it finished, was stopped or failed.
    public func start(_ source: PlayerSource, mixer: MixerID, options: PlayerOptions = PlayerOptions(),
                      ended: @escaping @Sendable (PlayerID, PlayerEnd) -> Void = { _, _ in }) async throws(PlayerError) -> PlayerID {
        guard (0...1000).contains(options.loop) else { throw .invalid("loop must be 0 (forever) to 1000") }
        guard options.level.isFinite, (-1...1).contains(options.level) else { throw .invalid("level must be -1 to 1") }
        let id = PlayerID.random()
        let (content, download) = try await prepare(source, id: id)
        let frames: PlayerFrames
        do throws(AudioFileError) {
            frames = try PlayerFrames(content, rate: .hz48000)
            // A file that opens but yields nothing is refused now, not discovered by a silent stall.
            var probe = AudioFrame(rate: .hz48000)
            guard try frames.next(into: &probe) else { throw .noAudio }
            try frames.rewind()
        } catch {
            if let download { try? FileManager.default.removeItem(atPath: download) }
            throw .file(error)
        }
        do {
            try await engine.addMixerParticipant(mixer, id.participant, source: .frames,
                                                 options: MixerParticipantOptions(volume: options.volume, canSpeak: options.heardBy),
                                                 queueFrames: Self.queueFrames)
        } catch {
            if let download { try? FileManager.default.removeItem(atPath: download) }
            throw .media(error)
        }
        let feeder = Feeder(engine: engine, mixer: mixer, participant: id.participant, frames: frames, loops: options.loop)
        let task = Task { [weak self] in
            let end = await feeder.run()
            if let download { try? FileManager.default.removeItem(atPath: download) }
            await self?.forget(id)
            ended(id, end)
        }
        running[id] = (mixer, task)
        return id
    }

    /// Stops a player now (its queued audio is dropped); `ended` reports `.stopped`.
    public func stop(_ id: PlayerID) async {
        guard let entry = running.removeValue(forKey: id) else { return }
        entry.task.cancel()
        try? await engine.removeMixerParticipant(entry.mixer, id.participant)
    }

    /// Players still running.
    public var active: [PlayerID] { Array(running.keys) }

    private func forget(_ id: PlayerID) { running[id] = nil }

    // MARK: Sources

    private func prepare(_ source: PlayerSource, id: PlayerID) async throws(PlayerError) -> (PlayerFrames.Content, String?) {
        switch source {
        case .speech(let request):
            do { _ = try SpeechSynthesizer.plan(request) } catch { throw .speech(error) }
            do { return (.frames(try await synthesizer.synthesize(request, rate: .hz48000)), nil) } catch { throw .speech(error) }
        case .file(let path):
            do {
                guard try AudioFileKind.sniff(path: path) != nil else { throw PlayerError.unsupportedFormat }
            } catch let e as AudioFileError { throw .file(e) } catch { throw .unsupportedFormat }
            return (.file(path: path), nil)
        case .url(let url):
            let path = try await fetch(url, id: id)
            return (.file(path: path), path)
        case .tone(let cadence, let milliseconds):
            guard !cadence.steps.isEmpty, cadence.cycleMilliseconds > 0 else { throw .invalid("the tone has no steps") }
            let length = cadence.repeats ? milliseconds : min(milliseconds, cadence.cycleMilliseconds)
            guard (20...limits.maxToneMilliseconds).contains(length) else { throw .invalid("a tone plays 20 ms to \(limits.maxToneMilliseconds / 1000) s") }
            return (.tone(cadence, frames: length / AudioFrame.durationMilliseconds), nil)
        }
    }

    /// Fetches `url` into the downloads directory, within the size and time limits.
    private func fetch(_ url: String, id: PlayerID) async throws(PlayerError) -> String {
        guard var client = http else { throw .fetch(url: url, reason: "this server fetches no URLs") }
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https",
              parsed.host?.isEmpty == false else {
            throw .fetch(url: url, reason: "not an http(s) URL")
        }
        client.maxResponseBytes = limits.maxDownloadBytes
        let response: HTTPClientResponse
        do {
            response = try await client.execute(HTTPClientRequest(url: url), timeout: limits.fetchTimeout)
        } catch let e as HTTPClientError {
            throw .fetch(url: url, reason: e.description)
        } catch {
            throw .fetch(url: url, reason: "\(error)")
        }
        guard (200..<300).contains(response.status) else { throw .status(url: url, code: response.status) }
        guard let kind = AudioFileKind.sniff(Array(response.body.prefix(12))) else { throw .unsupportedFormat }
        let path = downloads + "/" + id.rawValue + "." + kind.rawValue
        do {
            try FileManager.default.createDirectory(atPath: downloads, withIntermediateDirectories: true)
            try Data(response.body).write(to: URL(fileURLWithPath: path))
        } catch {
            throw .fetch(url: url, reason: "could not store the download: \(error.localizedDescription)")
        }
        return path
    }
}

/// Feeds one player's frames into its mixer queue, pacing itself on the room left.
private final class Feeder: @unchecked Sendable {
    // Invariant: used only by the one task that runs it.
    let engine: MediaEngine
    let mixer: MixerID
    let participant: MixerParticipantID
    let frames: PlayerFrames
    let loops: Int

    init(engine: MediaEngine, mixer: MixerID, participant: MixerParticipantID, frames: PlayerFrames, loops: Int) {
        self.engine = engine
        self.mixer = mixer
        self.participant = participant
        self.frames = frames
        self.loops = loops
    }

    func run() async -> PlayerEnd {
        let n = frames.rate.samplesPerFrame
        var frame = AudioFrame(rate: frames.rate)
        var batch = [Int16]()
        batch.reserveCapacity(MixerPlayers.batchFrames * n)
        var space = MixerPlayers.queueFrames
        var loop = 1
        var exhausted = false
        while true {
            if Task.isCancelled { return .stopped }
            batch.removeAll(keepingCapacity: true)
            var wanted = min(space, MixerPlayers.batchFrames)
            while wanted > 0 && !exhausted {
                do {
                    if try frames.next(into: &frame) {
                        frame.withSamples { batch.append(contentsOf: $0) }
                        wanted -= 1
                    } else if loops == 0 || loop < loops {
                        loop += 1
                        try frames.rewind()
                        // A loop that yields nothing would spin: stop after it.
                        if try !frames.next(into: &frame) { exhausted = true } else {
                            frame.withSamples { batch.append(contentsOf: $0) }
                            wanted -= 1
                        }
                    } else {
                        exhausted = true
                    }
                } catch {
                    try? await engine.removeMixerParticipant(mixer, participant)
                    return .failed("\(error)")
                }
            }
            let state: QueueState
            do {
                state = try await engine.queueFrames(mixer, participant, samples: batch, end: exhausted)
            } catch {
                return Task.isCancelled ? .stopped : .stopped
            }
            space = state.space
            if exhausted {
                // Played out when the queue drains; the worker then removes the participant.
                try? await Task.sleep(for: .milliseconds(20 * state.queued + 60))
                return Task.isCancelled ? .stopped : .finished
            }
            // Top up when about half a second is left.
            let ahead = state.queued - MixerPlayers.queueFrames / 2
            if ahead > 0 { try? await Task.sleep(for: .milliseconds(20 * ahead)) }
        }
    }
}
