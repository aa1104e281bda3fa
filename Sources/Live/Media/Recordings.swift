import Audio
import Foundation
import Media
import Synchronization

/// Recorders on mixers: each takes a tap of the mix (or of what one participant hears), drains it
/// every 200 ms and encodes into `directory/<id>.<format>` as it goes, so memory stays at one ring
/// and one drained batch whatever the length. Metadata lives beside the file (`<id>.json`), so a
/// finished recording stays addressable after a restart.
public actor Recordings {
    public nonisolated let engine: MediaEngine
    let players: MixerPlayers
    public let directory: String
    private var live: [RecordingID: (info: RecordingInfo, mixer: MixerID, task: Task<Void, Never>, stop: StopFlag)] = [:]
    static let drainInterval: Duration = .milliseconds(200)
    static let tapFrames = 250

    public init(engine: MediaEngine, players: MixerPlayers, directory: String) {
        self.engine = engine
        self.players = players
        self.directory = directory
    }

    /// Starts recording `mixer`; `ended` gets the final metadata once.
    public func start(mixer: MixerID, source: String, applicationID: String, options: RecordingOptions,
                      ended: @escaping @Sendable (RecordingInfo) -> Void = { _ in }) async throws(RecordingError) -> RecordingInfo {
        guard (3...7200).contains(options.timeOut) else { throw .invalid("timeOut must be 3 to 7200 seconds") }
        if let s = options.endOnSilence, !(3...10).contains(s) { throw .invalid("endOnSilence must be 3 to 10 seconds") }
        if options.split {
            guard options.participant != nil else { throw .invalid("split needs a participant: its voice left, what it hears right") }
            guard options.format == .wav else { throw .invalid("split stereo is recorded as wav") }
        }
        guard (1...32).contains(options.channels) else { throw .invalid("channels must be 1 to 32") }
        if options.channels > 1 && !options.split && options.format != .wav { throw .invalid("a channel per speaker is recorded as wav") }
        let speakerChannels = options.split || options.channels < 2 ? 0 : options.channels
        let channels = options.split ? 2 : options.channels
        let id = RecordingID.random()
        let path = file(id, options.format)
        let writer: any AudioFileWriter
        do {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            switch options.format {
            case .wav: writer = try WAVFileWriter(path: path, sampleRate: 48_000, channels: channels)
            case .mp3: writer = try MP3FileWriter(path: path, sampleRate: 48_000)
            case .ogg: writer = try OggOpusFileWriter(path: path, sampleRate: 48_000)
            }
        } catch { throw .file(error) }
        let tap = MixerTapID(id.rawValue)
        do {
            try await engine.addMixerTap(mixer, tap, participant: options.participant, split: options.split, speakerChannels: speakerChannels,
                                         frames: Self.tapFrames)
        } catch {
            try? writer.finish()
            try? FileManager.default.removeItem(atPath: path)
            throw .media(error)
        }
        if options.beepStart {
            _ = try? await players.start(.tone(.beep, milliseconds: 250), mixer: mixer, options: PlayerOptions(heardBy: options.beepHeardBy))
        }
        let info = RecordingInfo(id: id, source: source, applicationID: applicationID, format: options.format,
                                 channels: channels, sampleRate: 48_000, status: .recording, endReason: nil,
                                 startTime: Date(), endTime: nil, duration: 0, size: 0, droppedFrames: 0, error: nil)
        let stop = StopFlag()
        let run = RecorderRun(engine: engine, mixer: mixer, tap: tap, writer: writer, info: info, path: path, options: options, stop: stop)
        let metadata = self.file(id, nil)
        let task = Task { [weak self] in
            let final = await run.run()
            Recordings.save(final, to: metadata)
            await self?.finished(final)
            ended(final)
        }
        live[id] = (info, mixer, task, stop)
        return info
    }

    /// Ends a recording now; returns its final metadata.
    @discardableResult
    public func stop(_ id: RecordingID) async -> RecordingInfo? {
        guard let entry = live[id] else { return info(id) }
        entry.stop.set()
        await entry.task.value
        return info(id)
    }

    /// Ends every recording of a mixer (its room closed).
    public func stopAll(mixer: MixerID) async {
        for (id, entry) in live where entry.mixer == mixer { _ = await stop(id) }
    }

    public func info(_ id: RecordingID) -> RecordingInfo? {
        if let entry = live[id] { return entry.info }
        guard id.isWellFormed, let data = FileManager.default.contents(atPath: file(id, nil)) else { return nil }
        return try? Recordings.decoder.decode(RecordingInfo.self, from: data)
    }

    /// The finished file of a recording.
    public func path(_ id: RecordingID) -> String? {
        guard let info = info(id), info.status == .completed else { return nil }
        return file(id, info.format)
    }

    /// Removes a recording that is not running: its file and its metadata. False when it is running or unknown.
    public func delete(_ id: RecordingID) -> Bool {
        guard live[id] == nil, let info = info(id) else { return false }
        try? FileManager.default.removeItem(atPath: file(id, info.format))
        try? FileManager.default.removeItem(atPath: file(id, nil))
        return true
    }

    /// Keeps `samples` (mono, `rate` Hz) as a finished WAV recording, addressable as the others are (what a caller
    /// said to a speech input with `saveAudio`).
    public nonisolated func keep(_ samples: [Int16], rate: Int, source: String, applicationID: String) throws(RecordingError) -> RecordingInfo {
        let id = RecordingID.random()
        let path = file(id, .wav)
        do throws(AudioFileError) {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let writer = try WAVFileWriter(path: path, sampleRate: rate)
            try samples.withUnsafeBufferPointer { (b) throws(AudioFileError) in try writer.write(b) }
            try writer.finish()
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw .file(error)
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        let duration = Double(samples.count) / Double(rate)
        let end = Date()
        let info = RecordingInfo(id: id, source: source, applicationID: applicationID, format: .wav, channels: 1, sampleRate: rate,
                                 status: .completed, endReason: .stopped, startTime: end.addingTimeInterval(-duration), endTime: end,
                                 duration: duration, size: size, droppedFrames: 0, error: nil)
        Self.save(info, to: file(id, nil))
        return info
    }

    private func finished(_ info: RecordingInfo) { live[info.id] = nil }

    private nonisolated func file(_ id: RecordingID, _ format: AudioFileKind?) -> String {
        directory + "/" + id.rawValue + "." + (format?.rawValue ?? "json")
    }

    static let decoder: JSONDecoder = { let d = JSONDecoder(); d.dateDecodingStrategy = .iso8601; return d }()

    static func save(_ info: RecordingInfo, to path: String) {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        if let data = try? encoder.encode(info) { try? data.write(to: URL(fileURLWithPath: path)) }
    }
}

/// A flag set by `stop`, read by a recorder's loop.
public final class StopFlag: Sendable {
    private let value = Synchronization.Atomic<Bool>(false)
    public init() {}
    public func set() { value.store(true, ordering: .relaxed) }
    public var isSet: Bool { value.load(ordering: .relaxed) }
}
