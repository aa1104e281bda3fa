import Audio
import Foundation
import Media

/// One recording's loop: drain the tap, watch for silence and the time limit, write, finish.
final class RecorderRun: @unchecked Sendable {
    // Invariant: after init, used only by the one task that runs it.
    let engine: MediaEngine
    let mixer: MixerID
    let tap: MixerTapID
    let writer: any AudioFileWriter
    var info: RecordingInfo
    let path: String
    let options: RecordingOptions
    let stop: StopFlag
    /// Frames whose peak is below this count as silence (about −50 dBFS).
    static let silencePeak: Int16 = 100

    init(engine: MediaEngine, mixer: MixerID, tap: MixerTapID, writer: any AudioFileWriter, info: RecordingInfo, path: String,
         options: RecordingOptions, stop: StopFlag) {
        self.engine = engine
        self.mixer = mixer
        self.tap = tap
        self.writer = writer
        self.info = info
        self.path = path
        self.options = options
        self.stop = stop
    }

    func run() async -> RecordingInfo {
        let perFrame = 960 * info.channels
        let maxFrames = options.timeOut * 50
        let silenceFrames = (options.endOnSilence ?? 0) * 50
        var written = 0
        var silent = 0
        var reason: RecordingInfo.EndReason = .stopped
        var failure: String?
        loop: while true {
            let stopping = stop.isSet
            if !stopping { try? await Task.sleep(for: Recordings.drainInterval) }
            let drained: MixerTapSamples
            do { drained = try await engine.drainMixerTap(mixer, tap) } catch {
                reason = .mixerClosed
                break
            }
            info.droppedFrames = Int(drained.dropped)
            var offset = 0
            while offset + perFrame <= drained.samples.count {
                var peak: Int16 = 0
                for i in offset..<offset + perFrame { let v = drained.samples[i]; peak = max(peak, v == .min ? .max : abs(v)) }
                silent = peak < Self.silencePeak ? silent + 1 : 0
                do {
                    try drained.samples.withUnsafeBufferPointer { (b) throws(AudioFileError) in
                        try writer.write(UnsafeBufferPointer(rebasing: b[offset..<offset + perFrame]))
                    }
                } catch {
                    failure = "\(error)"
                    reason = .failed
                    break loop
                }
                written += 1
                offset += perFrame
                if written >= maxFrames { reason = .timeout; break loop }
                if silenceFrames > 0 && silent >= silenceFrames { reason = .silence; break loop }
            }
            info.duration = Double(written) / 50
            if stopping { break }
        }
        try? await engine.removeMixerTap(mixer, tap)
        do { try writer.finish() } catch { failure = failure ?? "\(error)" }
        info.duration = Double(written) / 50
        info.endTime = Date()
        info.endReason = failure == nil ? reason : .failed
        info.status = failure == nil ? .completed : .failed
        info.error = failure
        info.size = ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
        return info
    }
}
