import Foundation
import Wire

/// A WebM file written as a recording goes (both kinds of video archive): frames are kept in time order until
/// `write(upTo:)` says their time has passed (tracks arrive with different delays), and `close` writes the rest
/// and patches the header's sizes and duration. Frames of a track the file does not have are dropped.
final class WebMFile {
    struct Frame {
        var time: Int64
        var track: WebMWriter.Track
        var bytes: [UInt8]
        var keyframe: Bool
    }

    let path: String
    /// Bytes written so far.
    private(set) var size = 0
    /// Why writing stopped, once it has.
    private(set) var failure: String?
    /// The time of the last frame written (ms).
    private(set) var lastWritten: Int64 = 0
    private var writer: WebMWriter
    private var file: FileHandle?
    /// Frames not yet written, in time order.
    private var pending: [Frame] = []

    /// Creates the file with its header; nil when it cannot be created.
    init?(path: String, video: (width: Int, height: Int)?, audio: (sampleRate: Int, channels: Int)?, videoCodec: WebMWriter.VideoCodec = .vp8) {
        writer = WebMWriter(video: video, audio: audio, muxingApp: "switchboard", videoCodec: videoCodec)
        let header = writer.header()
        guard FileManager.default.createFile(atPath: path, contents: Data(header)), let file = FileHandle(forWritingAtPath: path),
              (try? file.seekToEnd()) != nil else { return nil }
        self.path = path
        self.file = file
        size = header.count
    }

    func add(_ frame: Frame) {
        var i = pending.count
        while i > 0, pending[i - 1].time > frame.time { i -= 1 }
        pending.insert(frame, at: i)
    }

    /// Writes the frames up to `time`.
    func write(upTo time: Int64) {
        var count = 0
        var out: [UInt8] = []
        for frame in pending {
            guard frame.time <= time else { break }
            count += 1
            guard frame.track == .video ? writer.video != nil : writer.audio != nil else { continue }
            out += writer.frame(frame.bytes, track: frame.track, time: frame.time, keyframe: frame.keyframe)
            lastWritten = frame.time
        }
        pending.removeFirst(count)
        guard failure == nil, let file, !out.isEmpty else { return }
        do {
            try file.write(contentsOf: out)
            size += out.count
        } catch {
            failure = "writing \(path): \(error)"
        }
    }

    /// Writes what is left, patches the header and closes the file.
    func close() {
        write(upTo: .max)
        guard let file else { return }
        if failure == nil {
            do {
                for patch in writer.finish() {
                    try file.seek(toOffset: UInt64(patch.offset))
                    try file.write(contentsOf: patch.bytes)
                }
            } catch {
                failure = "writing \(path): \(error)"
            }
        }
        try? file.close()
        self.file = nil
    }
}
