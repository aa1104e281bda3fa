/// A streaming WebM muxer (the Matroska subset of https://www.webmproject.org/docs/container/)
/// for VP8 video and Opus audio: it returns bytes for the caller to append to a file, and at
/// the end the patches that make the header exact.
///
/// ```
///  EBML header   DocType "webm", DocTypeVersion 4, DocTypeReadVersion 2
///  Segment       size: 8 bytes, "unknown" until finish() patches it
///  ├─ Info       TimestampScale 1,000,000 (ms), MuxingApp, WritingApp,
///  │             Duration (8-byte float, patched by finish())
///  ├─ Tracks     TrackEntry 1: V_VP8  (PixelWidth, PixelHeight)
///  │             TrackEntry 2: A_OPUS (CodecPrivate OpusHead, CodecDelay, SeekPreRoll)
///  ├─ Cluster    size: 8 bytes, "unknown" until finish() patches it
///  │  ├─ Timestamp   absolute, ms
///  │  ├─ SimpleBlock  track VINT | int16 time relative to the cluster | flags | frame
///  │  └─ ...
///  └─ Cluster ...
/// ```
///
/// A cluster starts at the first frame, at each video key frame (at every 5 s when there is no
/// video), and whenever a block's time would fall outside the int16 range of its cluster. Each
/// cluster's size is written as "unknown", which players accept, so a file cut short is still
/// readable; `finish()` also returns patches with the real sizes. Only the offsets of the size
/// fields are kept, never frame data.
///
/// The Opus track's OpusHead (RFC 7845 §5.1) has a pre-skip of 0 and CodecDelay 0: the packets
/// come from a stream already running, not from an encoder starting with this file, so there is
/// no encoder delay to trim and audio stays aligned with the video's timeline.
public struct WebMWriter: Sendable {
    public enum Track: Hashable, Sendable {
        case video, audio
    }

    /// Element IDs from the Matroska specification.
    enum ID {
        static let ebml: UInt32 = 0x1A45_DFA3
        static let ebmlVersion: UInt32 = 0x4286
        static let ebmlReadVersion: UInt32 = 0x42F7
        static let ebmlMaxIDLength: UInt32 = 0x42F2
        static let ebmlMaxSizeLength: UInt32 = 0x42F3
        static let docType: UInt32 = 0x4282
        static let docTypeVersion: UInt32 = 0x4287
        static let docTypeReadVersion: UInt32 = 0x4285
        static let segment: UInt32 = 0x1853_8067
        static let info: UInt32 = 0x1549_A966
        static let timestampScale: UInt32 = 0x2A_D7B1
        static let muxingApp: UInt32 = 0x4D80
        static let writingApp: UInt32 = 0x5741
        static let duration: UInt32 = 0x4489
        static let tracks: UInt32 = 0x1654_AE6B
        static let trackEntry: UInt32 = 0xAE
        static let trackNumber: UInt32 = 0xD7
        static let trackUID: UInt32 = 0x73C5
        static let trackType: UInt32 = 0x83
        static let flagLacing: UInt32 = 0x9C
        static let codecID: UInt32 = 0x86
        static let codecPrivate: UInt32 = 0x63A2
        static let codecDelay: UInt32 = 0x56AA
        static let seekPreRoll: UInt32 = 0x56BB
        static let video: UInt32 = 0xE0
        static let pixelWidth: UInt32 = 0xB0
        static let pixelHeight: UInt32 = 0xBA
        static let audio: UInt32 = 0xE1
        static let samplingFrequency: UInt32 = 0xB5
        static let channels: UInt32 = 0x9F
        static let cluster: UInt32 = 0x1F43_B675
        static let timestamp: UInt32 = 0xE7
        static let simpleBlock: UInt32 = 0xA3
    }

    /// Opus decoder pre-roll after a seek (the WebM Opus mapping's recommended 80 ms).
    public static let seekPreRoll: UInt64 = 80_000_000
    /// An audio-only file starts a cluster this often (ms).
    public static let audioClusterSpan: Int64 = 5_000

    public let video: (width: Int, height: Int)?
    public let audio: (sampleRate: Int, channels: Int)?
    public let muxingApp: String

    /// Bytes returned so far: the absolute offset of the next byte.
    public private(set) var written = 0
    private var segmentSizeOffset = 0
    private var durationOffset = 0
    private var clusterSizeOffsets: [Int] = []
    /// The current cluster's absolute time (ms), once one is open.
    private var clusterTime: Int64?
    private var videoClock = TrackTime()
    private var audioClock = TrackTime()

    /// The last time written on a track and the step before it (the length of its last frame).
    private struct TrackTime {
        var last: Int64?
        var step: Int64 = 0

        /// `time` clamped to not go backwards; records the step.
        mutating func advance(to time: Int64) -> Int64 {
            guard let last else {
                self.last = max(0, time)
                return max(0, time)
            }
            let clamped = max(last, time)
            if clamped > last { step = clamped - last }
            self.last = clamped
            return clamped
        }

        var end: Int64 { last.map { $0 + step } ?? 0 }
    }

    /// The video track's codec: VP8 (a WebM file), or H.264 with its `avcC` configuration record (ISO/IEC
    /// 14496-15), which makes the file Matroska (`.mkv`; WebM carries VP8 and VP9 only), its frames
    /// length-prefixed NAL units.
    public enum VideoCodec: Sendable, Equatable {
        case vp8
        case h264(avcC: [UInt8])
    }

    let videoCodec: VideoCodec

    /// A writer for a video track of `video`'s size and/or an Opus track; at least one is required.
    /// Opus with mapping family 0 carries 1 or 2 channels; `sampleRate` is the input rate
    /// recorded in the OpusHead (the decoder always runs at 48 kHz).
    public init(video: (width: Int, height: Int)?, audio: (sampleRate: Int, channels: Int)?, muxingApp: String, videoCodec: VideoCodec = .vp8) {
        precondition(video != nil || audio != nil, "a WebM file needs a video or an audio track")
        if let audio { precondition((1...2).contains(audio.channels) && audio.sampleRate > 0) }
        if let video { precondition(video.width >= 0 && video.height >= 0) }
        self.video = video
        self.audio = audio
        self.muxingApp = muxingApp
        self.videoCodec = videoCodec
    }

    /// The track number a SimpleBlock carries: video 1, audio 2 (1 when there is no video).
    public func trackNumber(_ track: Track) -> Int {
        switch track {
        case .video: 1
        case .audio: video == nil ? 1 : 2
        }
    }

    /// The EBML header, the start of the Segment, Info and Tracks: the first bytes of the file.
    public mutating func header() -> [UInt8] {
        precondition(written == 0, "header() comes first, once")
        var out = EBML.element(ID.ebml,
            EBML.unsigned(ID.ebmlVersion, 1) + EBML.unsigned(ID.ebmlReadVersion, 1)
            + EBML.unsigned(ID.ebmlMaxIDLength, 4) + EBML.unsigned(ID.ebmlMaxSizeLength, 8)
            + EBML.string(ID.docType, videoCodec == .vp8 ? "webm" : "matroska") + EBML.unsigned(ID.docTypeVersion, 4)
            + EBML.unsigned(ID.docTypeReadVersion, 2))
        out += EBML.id(ID.segment)
        segmentSizeOffset = out.count
        out += EBML.unknownSize

        var info = EBML.unsigned(ID.timestampScale, 1_000_000)
        info += EBML.string(ID.muxingApp, muxingApp) + EBML.string(ID.writingApp, muxingApp)
        // Duration last, so its offset is the end of Info less its 8 data bytes.
        info += EBML.float(ID.duration, 0)
        out += EBML.element(ID.info, info)
        durationOffset = out.count - 8

        var tracks: [UInt8] = []
        if let video {
            let codec: [UInt8]
            switch videoCodec {
            case .vp8: codec = EBML.string(ID.codecID, "V_VP8")
            case .h264(let avcC): codec = EBML.string(ID.codecID, "V_MPEG4/ISO/AVC") + EBML.element(ID.codecPrivate, avcC)
            }
            tracks += EBML.element(ID.trackEntry,
                EBML.unsigned(ID.trackNumber, UInt64(trackNumber(.video))) + EBML.unsigned(ID.trackUID, UInt64(trackNumber(.video)))
                + EBML.unsigned(ID.trackType, 1) + EBML.unsigned(ID.flagLacing, 0) + codec
                + EBML.element(ID.video, EBML.unsigned(ID.pixelWidth, UInt64(video.width)) + EBML.unsigned(ID.pixelHeight, UInt64(video.height))))
        }
        if let audio {
            tracks += EBML.element(ID.trackEntry,
                EBML.unsigned(ID.trackNumber, UInt64(trackNumber(.audio))) + EBML.unsigned(ID.trackUID, UInt64(trackNumber(.audio)))
                + EBML.unsigned(ID.trackType, 2) + EBML.unsigned(ID.flagLacing, 0) + EBML.string(ID.codecID, "A_OPUS")
                + EBML.element(ID.codecPrivate, Self.opusHead(channels: audio.channels, inputSampleRate: audio.sampleRate))
                + EBML.unsigned(ID.codecDelay, 0) + EBML.unsigned(ID.seekPreRoll, Self.seekPreRoll)
                + EBML.element(ID.audio, EBML.float(ID.samplingFrequency, 48_000) + EBML.unsigned(ID.channels, UInt64(audio.channels))))
        }
        out += EBML.element(ID.tracks, tracks)
        written = out.count
        return out
    }

    /// The OpusHead identification header (RFC 7845 §5.1), little-endian fields:
    ///
    /// ```
    ///  "OpusHead" | version 1 | channels | pre-skip (u16) | input rate (u32) | gain (i16) | family 0
    /// ```
    public static func opusHead(channels: Int, inputSampleRate: Int) -> [UInt8] {
        let rate = UInt32(clamping: inputSampleRate)
        return Array("OpusHead".utf8) + [1, UInt8(clamping: channels), 0, 0]
            + [UInt8(truncatingIfNeeded: rate), UInt8(truncatingIfNeeded: rate >> 8),
               UInt8(truncatingIfNeeded: rate >> 16), UInt8(truncatingIfNeeded: rate >> 24)]
            + [0, 0, 0]
    }

    /// One frame as a SimpleBlock, after a new Cluster when one is due. `time` is in ms from
    /// the start of the file; a time before the track's previous one is taken as that one.
    public mutating func frame(_ bytes: [UInt8], track: Track, time: Int64, keyframe: Bool) -> [UInt8] {
        precondition(written > 0, "header() comes first")
        precondition(track == .video ? video != nil : audio != nil, "no such track in this file")
        let time = track == .video ? videoClock.advance(to: time) : audioClock.advance(to: time)

        var out: [UInt8] = []
        let due: Bool
        if let clusterTime {
            let relative = time - clusterTime
            if relative < Int64(Int16.min) || relative > Int64(Int16.max) {
                due = true
            } else if video != nil {
                due = track == .video && keyframe
            } else {
                due = relative >= Self.audioClusterSpan
            }
        } else {
            due = true
        }
        if due {
            out += EBML.id(ID.cluster)
            clusterSizeOffsets.append(written + out.count)
            out += EBML.unknownSize
            out += EBML.unsigned(ID.timestamp, UInt64(time))
            clusterTime = time
        }
        let relative = Int16(time - (clusterTime ?? time))
        let flags: UInt8 = track == .audio || keyframe ? 0x80 : 0x00
        let head = EBML.size(trackNumber(track)) + [UInt8(truncatingIfNeeded: UInt16(bitPattern: relative) >> 8),
                                                    UInt8(truncatingIfNeeded: UInt16(bitPattern: relative)), flags]
        out += EBML.id(ID.simpleBlock) + EBML.size(head.count + bytes.count) + head
        out += bytes
        written += out.count
        return out
    }

    /// Bytes to write at absolute file offsets once everything is written: the Segment's size,
    /// the Duration (the end of the last frame, in ms) and each Cluster's size.
    public func finish() -> [(offset: Int, bytes: [UInt8])] {
        guard written > 0 else { return [] }
        var patches: [(offset: Int, bytes: [UInt8])] = []
        patches.append((segmentSizeOffset, EBML.size(written - segmentSizeOffset - 8, length: 8)))
        let duration = Double(max(videoClock.end, audioClock.end))
        patches.append((durationOffset, EBML.bigEndian(duration.bitPattern, 8)))
        for (i, offset) in clusterSizeOffsets.enumerated() {
            let end = i + 1 < clusterSizeOffsets.count ? clusterSizeOffsets[i + 1] - EBML.id(ID.cluster).count : written
            patches.append((offset, EBML.size(end - offset - 8, length: 8)))
        }
        return patches
    }
}
