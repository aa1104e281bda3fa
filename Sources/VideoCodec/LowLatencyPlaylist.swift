import Foundation

/// A low-latency HLS media playlist (RFC 8216bis, "Low-Latency HLS"): whole segments, and the recent ones also as
/// the partial segments they were published in while they were being made, so that a player can play a part a
/// fraction of a second after it was encoded instead of waiting for its segment. Pure: `MediaWriter`'s
/// low-latency output fills it in as parts and segments end, and `text` is the playlist a player reads.
///
/// A player asks for the next version with a blocking reload (`_HLS_msn`, `_HLS_part`: `Request`), which the
/// server holds until the playlist holds what was asked for (`Position.satisfies`); `EXT-X-PRELOAD-HINT` names the
/// part being made, which the server also holds a request for until it exists.
public struct LowLatencyPlaylist: Sendable, Equatable {
    public struct Part: Sendable, Equatable {
        public var duration: Double
        /// Begins with a key frame (or holds no video): a player can start there.
        public var independent: Bool
    }

    public struct Segment: Sendable, Equatable {
        public var sequence: Int
        public var duration: Double
        public var parts: [Part]
        /// When its first picture was taken (`EXT-X-PROGRAM-DATE-TIME`), in seconds since 1970.
        public var date: Double
    }

    /// How far the playlist has come: `segment` is being made (its number) and `parts` of it are listed.
    public struct Position: Sendable, Equatable {
        public var segment: Int
        public var parts: Int
        public var ended: Bool

        /// Whether a playlist this far holds what `request` waits for: segment `msn` whole, or with `part`,
        /// that part of it (or a later segment). An ended playlist holds all it ever will.
        public func satisfies(_ request: Request) -> Bool {
            if ended || segment > request.msn { return true }
            guard let part = request.part else { return false }
            return segment == request.msn && parts > part
        }

        /// Whether `request` asks for more than the server answers a request for: a segment beyond the one after
        /// the one being made (RFC 8216bis: the last whole one plus two), or a part more than `maxPartsAhead`
        /// beyond the last one listed.
        public func tooFarAhead(_ request: Request) -> Bool {
            if ended || request.msn < segment { return false }
            if request.msn > segment + 1 { return true }
            guard let part = request.part else { return false }
            // Counted from the last part listed (of the segment being made; the next one has none yet).
            return part >= LowLatencyPlaylist.maxPartsAhead + (request.msn == segment ? parts : 0)
        }
    }

    /// A blocking playlist reload: `_HLS_msn` and optionally `_HLS_part`.
    public struct Request: Sendable, Equatable {
        public var msn: Int
        public var part: Int?

        public init(msn: Int, part: Int? = nil) {
            self.msn = msn
            self.part = part
        }

        public enum Refusal: Error, Equatable { case partWithoutSegment, notANumber }

        /// The request in a playlist's query, nil when it asks for none; a refusal for `_HLS_part` alone or a value
        /// that is not a whole number.
        public init?(query: [String: String]) throws(Refusal) {
            let msn = query["_HLS_msn"], part = query["_HLS_part"]
            guard let msn else {
                if part != nil { throw .partWithoutSegment }
                return nil
            }
            guard let m = Self.number(msn) else { throw .notANumber }
            var p: Int?
            if let part {
                guard let n = Self.number(part) else { throw .notANumber }
                p = n
            }
            self.init(msn: m, part: p)
        }

        private static func number(_ text: String) -> Int? {
            guard !text.isEmpty, text.count <= 9, text.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
            return Int(text)
        }
    }

    /// Parts a request may ask for beyond the last listed one (of the segment being made or of the next).
    public static let maxPartsAhead = 3

    /// Seconds: the whole segments' target (`EXT-X-TARGETDURATION`) and the parts' (`PART-TARGET`).
    public let targetDuration: Int
    public let partTarget: Double
    /// Whole segments listed: the newest `window`.
    public let window: Int
    /// The newest whole segments also listed as parts (those within three target durations of the end).
    public static let segmentsWithParts = 2

    public private(set) var segments: [Segment] = []
    /// The segment being made: its number, its parts so far, when it began.
    public private(set) var current: Int = 0
    public private(set) var currentParts: [Part] = []
    private var currentDate: Double = 0
    public private(set) var ended = false

    public init(targetDuration: Int, partTarget: Double, window: Int) {
        precondition(targetDuration > 0 && partTarget > 0 && window > Self.segmentsWithParts)
        self.targetDuration = targetDuration
        self.partTarget = partTarget
        self.window = window
    }

    public var position: Position { Position(segment: current, parts: currentParts.count, ended: ended) }

    /// The name of part `part` of segment `segment`, and of a whole segment.
    public static func partName(_ segment: Int, _ part: Int) -> String { "segment-\(segment).\(part).ts" }
    public static func segmentName(_ segment: Int) -> String { "segment-\(segment).ts" }

    /// The segment and part a file name names (`segment-<n>.ts`: part nil), or nil for any other name.
    public static func file(named name: String) -> (segment: Int, part: Int?)? {
        guard name.hasPrefix("segment-"), name.hasSuffix(".ts") else { return nil }
        let numbers = name.dropFirst(8).dropLast(3).split(separator: ".", omittingEmptySubsequences: false)
        guard numbers.count <= 2, numbers.allSatisfy({ !$0.isEmpty && $0.count <= 9 && $0.allSatisfy { ("0"..."9").contains($0) } }) else { return nil }
        return (Int(numbers[0])!, numbers.count == 2 ? Int(numbers[1])! : nil)
    }

    /// The segment being made began (its first part at `date`, seconds since 1970).
    public mutating func begin(at date: Double) {
        if currentParts.isEmpty { currentDate = date }
    }

    /// A part of the segment being made ended.
    public mutating func add(_ part: Part) {
        currentParts.append(part)
    }

    /// The segment being made ended, its parts all added; the next one is made from now. Returns the numbers of
    /// segments no longer listed at all.
    @discardableResult
    public mutating func endSegment() -> [Int] {
        guard !currentParts.isEmpty else { return [] }
        let duration = currentParts.reduce(0) { $0 + $1.duration }
        segments.append(Segment(sequence: current, duration: duration, parts: currentParts, date: currentDate))
        current += 1
        currentParts = []
        let gone = segments.prefix(max(0, segments.count - window)).map(\.sequence)
        segments.removeFirst(gone.count)
        return gone
    }

    /// No more parts: what was being made ends as a segment, and the playlist says it ends.
    public mutating func end() {
        endSegment()
        ended = true
    }

    /// The playlist.
    public var text: String {
        let holdBack = 3 * partTarget
        var lines = [
            "#EXTM3U",
            "#EXT-X-VERSION:6",
            "#EXT-X-TARGETDURATION:\(max(targetDuration, Int((segments.map(\.duration).max() ?? 0).rounded())))",
            "#EXT-X-PART-INF:PART-TARGET=\(Self.decimal(partTarget))",
            "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=\(Self.decimal(holdBack))",
            "#EXT-X-MEDIA-SEQUENCE:\(segments.first?.sequence ?? current)",
            "#EXT-X-INDEPENDENT-SEGMENTS",
        ]
        let first = segments.first?.date ?? currentDate
        if !segments.isEmpty || !currentParts.isEmpty { lines.append("#EXT-X-PROGRAM-DATE-TIME:" + Self.date(first)) }
        func partLines(_ segment: Int, _ parts: [Part]) {
            for (i, part) in parts.enumerated() {
                lines.append("#EXT-X-PART:DURATION=\(Self.decimal(part.duration)),URI=\"\(Self.partName(segment, i))\"" + (part.independent ? ",INDEPENDENT=YES" : ""))
            }
        }
        for (i, segment) in segments.enumerated() {
            if !ended, i >= segments.count - Self.segmentsWithParts { partLines(segment.sequence, segment.parts) }
            lines.append("#EXTINF:\(Self.decimal(segment.duration)),")
            lines.append(Self.segmentName(segment.sequence))
        }
        if ended {
            lines.append("#EXT-X-ENDLIST")
        } else {
            partLines(current, currentParts)
            lines.append("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"\(Self.partName(current, currentParts.count))\"")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Seconds with at most three decimals, as HLS writes them.
    static func decimal(_ value: Double) -> String { String(format: "%.3f", value) }

    static func date(_ seconds: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }
}
