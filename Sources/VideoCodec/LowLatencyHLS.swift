import CAV
import Foundation
import Synchronization

/// How far a low-latency HLS output has come, shared with whoever serves it: a blocking playlist reload waits
/// here (`wait`) until the playlist holds what it asks for, and the output moves it on (`update`) each time a
/// part or a segment is written. Thread-safe.
public final class HLSProgress: Sendable, Equatable {
    private struct State {
        var position = LowLatencyPlaylist.Position(segment: 0, parts: 0, ended: false)
        var waiters: [Int: (request: LowLatencyPlaylist.Request, continuation: CheckedContinuation<Bool, Never>)] = [:]
        /// Waits whose time ran out before they were registered.
        var expired: Set<Int> = []
        var next = 0
    }

    private let state = Mutex(State())

    public init() {}

    public static func == (a: HLSProgress, b: HLSProgress) -> Bool { a === b }

    public var position: LowLatencyPlaylist.Position { state.withLock { $0.position } }

    func update(_ position: LowLatencyPlaylist.Position) {
        let ready = state.withLock { s -> [CheckedContinuation<Bool, Never>] in
            s.position = position
            let done = s.waiters.filter { position.satisfies($0.value.request) }
            for id in done.keys { s.waiters[id] = nil }
            return done.values.map(\.continuation)
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// Waits until the playlist holds what `request` asks for (true), or for `timeout` (false).
    public func wait(for request: LowLatencyPlaylist.Request, timeout: Duration) async -> Bool {
        let id = state.withLock { s in
            s.next += 1
            return s.next
        }
        let expiry = Task { [self] in
            try? await Task.sleep(for: timeout)
            expire(id)
        }
        defer { expiry.cancel() }
        return await withCheckedContinuation { continuation in
            let answer = state.withLock { s -> Bool? in
                if s.position.satisfies(request) { return true }
                if s.expired.remove(id) != nil { return false }
                s.waiters[id] = (request, continuation)
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    private func expire(_ id: Int) {
        let waiter = state.withLock { s in
            let waiter = s.waiters.removeValue(forKey: id)
            if waiter == nil { s.expired.insert(id) }
            return waiter
        }
        waiter?.continuation.resume(returning: false)
    }
}

/// `MediaWriter`'s low-latency HLS output: MPEG-TS segments of one key frame interval, each also written as the
/// partial segments (at most `partTarget` long, the first of each segment starting with its key frame) it is
/// made of, a part listed in `live.m3u8` (`LowLatencyPlaylist`) as soon as it is written. One MPEG-TS muxer
/// writes into memory; at each part's end what it wrote since the last one becomes the part's file, and at the
/// segment's end its parts together the segment's, so a segment is exactly its parts one after the other. Files are
/// written whole under a temporary name and renamed, the playlist after the files it lists.
final class LowLatencyHLSOutput: PacketOutput {
    static let partTarget = 0.5
    static let window = 6

    private let directory: String
    private let encoders: [MediaWriter.Encoder]
    /// The stream whose packets cut parts and segments: the video, or the sound when there is none.
    private let clock: MediaWriter.Encoder
    private let segmentSeconds: Double
    let progress: HLSProgress
    private var playlist: LowLatencyPlaylist
    /// The muxer (one for the whole stream), whether a segment is being made, and its parts' bytes so far.
    private var muxer: Muxer?
    private var making = false
    private var segmentBytes: [UInt8] = []
    /// In the clock's seconds: where the segment and the part being made began, and where the last packet ended.
    private var segmentStart = 0.0
    private var partStart = 0.0
    private var lastEnd = 0.0
    private var partIndependent = false
    /// Seconds since 1970 at the clock's zero.
    private var origin: Double?
    /// Segments no longer listed whose files are still kept (a player may be fetching the newest of them).
    private var unlisted: [Int] = []
    private var broken = false

    init(directory: String, progress: HLSProgress, encoders: [MediaWriter.Encoder], segmentSeconds: Double) {
        self.directory = directory
        self.progress = progress
        self.encoders = encoders
        clock = encoders.first(where: \.isVideo) ?? encoders[0]
        self.segmentSeconds = segmentSeconds
        playlist = LowLatencyPlaylist(targetDuration: max(1, Int(segmentSeconds.rounded(.up))), partTarget: Self.partTarget, window: Self.window)
    }

    var isLive: Bool { playlist.position.parts > 0 || playlist.position.segment > 0 }

    func write(_ packet: UnsafeMutablePointer<AVPacket>, from encoder: MediaWriter.Encoder) -> String? {
        guard !broken else { return nil }
        let why = take(packet, from: encoder)
        broken = why != nil
        return why
    }

    private func take(_ packet: UnsafeMutablePointer<AVPacket>, from encoder: MediaWriter.Encoder) -> String? {
        if encoder.index == clock.index {
            let start = Double(packet.pointee.pts) * av_q2d(encoder.timeBase)
            let end = start + Double(max(1, packet.pointee.duration)) * av_q2d(encoder.timeBase)
            let key = !clock.isVideo || packet.pointee.flags & AV_PKT_FLAG_KEY != 0
            if !making {
                guard key else { return nil }  // a segment starts at a key frame
                if let why = begin(at: start) { return why }
            } else if key && start - segmentStart >= segmentSeconds - 1e-6 {
                if let why = closePart(at: start, endingSegment: true) ?? begin(at: start) { return why }
            } else if end - partStart > Self.partTarget + 1e-6 {
                if let why = closePart(at: start, endingSegment: false) { return why }
                partIndependent = key
            }
            lastEnd = end
        }
        guard let muxer, making else { return nil }  // sound before the first picture
        return muxer.write(packet, from: encoder)
    }

    /// A segment begins at `start` (the packet at `start` is a key frame): the output's one muxer, writing into
    /// memory, opened for the first, and told to write the stream's tables again before the next packet for the
    /// others, so that each segment can be played from its start and the transport stream goes on unbroken
    /// from one segment to the next (a player reading them in turn sees one stream).
    private func begin(at start: Double) -> String? {
        if origin == nil { origin = Date().timeIntervalSince1970 - start }
        if let muxer {
            av_opt_set(muxer.context.pointee.priv_data, "mpegts_flags", "+resend_headers", 0)
        } else {
            var options: OpaquePointer?
            do {
                muxer = try Muxer(format: "mpegts", url: "", encoders: encoders, options: &options, inMemory: true)
            } catch {
                return "\(error)"
            }
        }
        segmentBytes = []
        segmentStart = start
        partStart = start
        partIndependent = true
        making = true
        playlist.begin(at: origin! + start)
        return nil
    }

    /// Ends the part being made at `end` (and with `endingSegment`, its segment): its file, the segment's, then
    /// the playlist.
    private func closePart(at end: Double, endingSegment: Bool, last: Bool = false) -> String? {
        guard let muxer, making else { return nil }
        if last {
            if let why = muxer.finish() { return why }
        } else {
            muxer.flush()
        }
        let part = muxer.takeMemory()
        let segment = playlist.position.segment, index = playlist.position.parts
        if let why = save(part, as: LowLatencyPlaylist.partName(segment, index)) { return why }
        segmentBytes += part
        playlist.add(.init(duration: end - partStart, independent: partIndependent))
        partStart = end
        partIndependent = false
        if endingSegment {
            if let why = save(segmentBytes, as: LowLatencyPlaylist.segmentName(segment)) { return why }
            segmentBytes = []
            making = false
            unlisted += playlist.endSegment()
            forget(before: segment)
        }
        return publish()
    }

    /// Deletes the files nothing lists any more, a segment after they left the playlist.
    private func forget(before segment: Int) {
        let manager = FileManager.default
        while unlisted.count > 1 {
            let old = unlisted.removeFirst()
            try? manager.removeItem(atPath: directory + "/" + LowLatencyPlaylist.segmentName(old))
        }
        // Parts are listed for the newest few segments only.
        let stale = segment - LowLatencyPlaylist.segmentsWithParts - 1
        guard let parts = playlist.segments.first(where: { $0.sequence == stale })?.parts.count else { return }
        for part in 0..<parts { try? manager.removeItem(atPath: directory + "/" + LowLatencyPlaylist.partName(stale, part)) }
    }

    private func publish() -> String? {
        let why = save(Array(playlist.text.utf8), as: MediaWriter.Output.playlist)
        progress.update(playlist.position)
        return why
    }

    private func save(_ bytes: [UInt8], as name: String) -> String? {
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: directory + "/" + name), options: .atomic)
            return nil
        } catch {
            return "cannot write \(name): \(error.localizedDescription)"
        }
    }

    /// The last part and segment end where the last packet did, and the playlist says it ends.
    func finish() -> String? {
        var why: String?
        if !broken { why = closePart(at: lastEnd, endingSegment: true, last: true) }
        playlist.end()
        return why ?? publish()
    }
}
