import Foundation
import Testing
@testable import Audio

@Suite("Audio files")
struct AudioFileTests {
    static func temporary(_ name: String) -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("audio-tests-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent(name).path
    }

    /// Runs a command and returns its standard output (trimmed); nil when it fails. The wait suspends
    /// rather than blocks: tests share a cooperative pool as wide as the machine has cores, and a test
    /// parked in a blocking wait on it stalls every other test of the run.
    static func run(_ arguments: [String], timeout: Duration = .seconds(60)) async -> String? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = arguments
        // A file, not a pipe: nothing has to read while the command runs, however much it prints.
        let outPath = temporary("run-\(UUID().uuidString).out")
        guard FileManager.default.createFile(atPath: outPath, contents: nil), let out = FileHandle(forWritingAtPath: outPath) else { return nil }
        defer { try? FileManager.default.removeItem(atPath: outPath) }
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return nil }
        let deadline = ContinuousClock.now + timeout
        while p.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        try? out.close()
        guard p.terminationStatus == 0, let data = FileManager.default.contents(atPath: outPath) else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func tone(rate: Int, seconds: Double) -> [Int16] { Signals.sine(440, rate: rate, count: Int(Double(rate) * seconds)) }

    enum Kind: String, CaseIterable, Sendable { case wav, mp3, opus }

    static func writer(_ kind: Kind, path: String, rate: Int) throws -> any AudioFileWriter {
        switch kind {
        case .wav: try WAVFileWriter(path: path, sampleRate: rate)
        case .mp3: try MP3FileWriter(path: path, sampleRate: rate)
        case .opus: try OggOpusFileWriter(path: path, sampleRate: rate)
        }
    }

    static func reader(_ kind: Kind, path: String) throws -> any AudioFileReader {
        switch kind {
        case .wav: try WAVFileReader(path: path)
        case .mp3: try MP3FileReader(path: path)
        case .opus: try OggOpusFileReader(path: path)
        }
    }

    /// Reads until the end or the first error, keeping what came before the error (`readAll` drops it).
    static func readUntilError(_ reader: any AudioFileReader) -> (samples: [Int16], error: AudioFileError?) {
        var all: [Int16] = [], block = [Int16](repeating: 0, count: 4096)
        do {
            while true {
                let n = try block.withUnsafeMutableBufferPointer { (b) throws(AudioFileError) in try reader.read(into: b) }
                if n == 0 { return (all, nil) }
                all += block[0..<n]
            }
        } catch { return (all, error) }
    }

    @Test("written files have the right duration for sox and read back as the same tone", arguments: Kind.allCases, [8000, 16_000, 48_000])
    func roundTrip(kind: Kind, rate: Int) async throws {
        let path = Self.temporary("tone-\(rate).\(kind.rawValue)")
        let w = try Self.writer(kind, path: path, rate: rate)
        let samples = Self.tone(rate: rate, seconds: 1.5)
        // In 20 ms frames, as a recorder would.
        for start in stride(from: 0, to: samples.count, by: rate / 50) {
            try w.write(Array(samples[start..<min(samples.count, start + rate / 50)]))
        }
        try w.finish()
        // Check with outside tools: sox for WAV and MP3, opusdec then sox for Ogg Opus.
        let durationText: String?
        if kind == .opus {
            let wav = path + ".dec.wav"
            _ = await Self.run(["opusdec", "--quiet", path, wav])
            durationText = await Self.run(["soxi", "-D", wav])
        } else {
            durationText = await Self.run(["soxi", "-D", path])
        }
        let duration = try #require(durationText.flatMap(Double.init), "soxi could not read \(path)")
        switch kind {
        case .wav: #expect(abs(duration - 1.5) < 0.001, "\(kind) at \(rate): \(duration) s")
        // sox counts whole MP3 frames and does not trim the encoder delay (1105 samples) and padding.
        case .mp3: #expect(duration >= 1.5 && duration - 1.5 < 0.18, "\(kind) at \(rate): \(duration) s")
        case .opus: #expect(abs(duration - 1.5) < 0.03, "\(kind) at \(rate): \(duration) s")
        }

        let r = try Self.reader(kind, path: path)
        let back = try r.readAll()
        let seconds = Double(back.count) / Double(r.sampleRate)
        #expect(abs(seconds - 1.5) < 0.03, "read back \(seconds) s")
        let middle = Array(back[(back.count / 3)..<(back.count / 3 + r.sampleRate / 5)])
        #expect(abs(Signals.dominantFrequency(middle, rate: r.sampleRate, low: 200, high: 1000, step: 5) - 440) <= 5)
        if kind == .wav { #expect(back == samples) }
    }

    @Test("a chained Ogg Opus file whose links differ in channels reads as each link's tone, mixed to mono")
    func chainedOgg() async throws {
        // One second of 440 Hz in stereo, then one second of 660 Hz in mono: two Ogg Opus streams one
        // after the other, which is a valid chained file (RFC 7845, section 3).
        var chained = Data()
        for (frequency, channels) in [(440, 2), (660, 1)] {
            let wav = Self.temporary("link-\(frequency).wav"), opus = wav + ".opus"
            _ = try #require(await Self.run(["sox", "-n", "-r", "48000", "-c", "\(channels)", "-b", "16", wav, "synth", "1", "sine", "\(frequency)", "vol", "0.5"]))
            _ = try #require(await Self.run(["opusenc", "--quiet", wav, opus]))
            chained.append(try #require(FileManager.default.contents(atPath: opus)))
        }
        let path = Self.temporary("chained.opus")
        #expect(FileManager.default.createFile(atPath: path, contents: chained))
        let back = try OggOpusFileReader(path: path).readAll()
        #expect(abs(back.count - 96_000) <= 960, "read \(back.count) samples")
        guard back.count >= 90_000 else { return }
        let first = Array(back[12_000..<21_600]), second = Array(back[60_000..<69_600])
        #expect(abs(Signals.dominantFrequency(first, rate: 48_000, low: 200, high: 1000, step: 5) - 440) <= 5)
        #expect(abs(Signals.dominantFrequency(second, rate: 48_000, low: 200, high: 1000, step: 5) - 660) <= 5)
    }

    @Test("a chained Ogg Opus file whose second link is damaged plays its first link, then a typed error")
    func damagedChainedOgg() throws {
        // A fuzz input (one byte changed in the second link's header pages): opening it no longer
        // scans the links, where libopusfile 0.12 leaked the first link's tags and refused the file.
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/fuzz/OggOpus/leak-chained-second-link-bad-timestamp.opus").path
        let reader = try OggOpusFileReader(path: path)
        let (back, failure) = Self.readUntilError(reader)
        #expect(back.count == 9600, "the first link is 0.2 s")
        #expect(failure == .opus(-139), "OP_EBADTIMESTAMP")
    }

    @Test("an MP3 file joined from encodes at two sample rates reads the first part, then a clear error")
    func joinedMP3() async throws {
        // 44.1 kHz (MPEG-1) then 22.05 kHz (MPEG-2) frames, one second of each, in one file.
        var joined = Data()
        for (frequency, rate) in [(440, 44_100), (660, 22_050)] {
            let mp3 = Self.temporary("part-\(frequency).mp3")
            _ = try #require(await Self.run(["sox", "-n", "-r", "\(rate)", "-c", "1", mp3, "synth", "1", "sine", "\(frequency)", "vol", "0.5"]))
            joined.append(try #require(FileManager.default.contents(atPath: mp3)))
        }
        let path = Self.temporary("joined.mp3")
        #expect(FileManager.default.createFile(atPath: path, contents: joined))
        let reader = try MP3FileReader(path: path)
        let (back, failure) = Self.readUntilError(reader)
        #expect(failure == .mp3("the sample rate changes from 44100 to 22050 Hz within the file"))
        // Not the second part read at twice its speed: the first second (plus encoder padding), then nothing.
        #expect(back.count >= 44_100 && back.count <= 44_100 + 5_000, "read \(back.count) samples")
        #expect(abs(Signals.dominantFrequency(Array(back[11_025..<19_845]), rate: 44_100, low: 200, high: 1000, step: 5) - 440) <= 5)
        var block = [Int16](repeating: 0, count: 4096)
        #expect(try block.withUnsafeMutableBufferPointer { (b) throws(AudioFileError) in try reader.read(into: b) } == 0)
    }

    @Test("a file plays as 20 ms frames at the call's rate")
    func playback() throws {
        let path = Self.temporary("play.wav")
        let w = try WAVFileWriter(path: path, sampleRate: 44_100)
        try w.write(Self.tone(rate: 44_100, seconds: 1))
        try w.finish()
        let player = try FilePlayback(WAVFileReader(path: path), rate: .hz16000)
        var frame = AudioFrame(rate: .hz16000)
        var all: [Int16] = []
        var frames = 0
        while try player.next(into: &frame) { all += frame.samples; frames += 1 }
        #expect(frames >= 49 && frames <= 51)
        #expect(abs(Signals.dominantFrequency(Array(all[4000..<8000]), rate: 16_000, low: 200, high: 1000, step: 5) - 440) <= 5)
    }

    @Test("bad bytes are typed errors for every reader", arguments: Kind.allCases)
    func garbage(kind: Kind) throws {
        let path = Self.temporary("garbage.\(kind.rawValue)")
        var random = Signals.Random(state: 3)
        let bytes = (0..<20_000).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        #expect(throws: AudioFileError.self) {
            let r = try Self.reader(kind, path: path)
            _ = try r.readAll()
        }
        #expect(throws: AudioFileError.self) { _ = try Self.reader(kind, path: Self.temporary("missing.\(kind.rawValue)")) }
    }

    @Test("a truncated WAV reads what is there, then reports the truncation")
    func truncated() throws {
        let path = Self.temporary("cut.wav")
        let bytes = WAVFormat(sampleRate: 8000).header(dataLength: 16_000) + [UInt8](repeating: 1, count: 8000)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        let r = try WAVFileReader(path: path)
        #expect(throws: AudioFileError.wav(.truncated(needed: 8000, available: 0))) { _ = try r.readAll() }
    }
}
