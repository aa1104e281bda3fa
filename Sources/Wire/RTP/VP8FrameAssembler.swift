/// Rebuilds VP8 frames from the RTP payloads of one stream, in sequence order (RFC 7741 §4).
///
/// ```
///  RTP timestamp T          T          T (marker)   T+3000 ...
///  ┌────────────┐  ┌────────────┐  ┌────────────┐
///  │desc S=1 P=0│  │desc S=0    │  │desc S=0    │   desc: VP8PayloadDescriptor
///  │VP8 data ...│  │VP8 data ...│  │VP8 data ...│
///  └────────────┘  └────────────┘  └────────────┘
///  └──────────────────── one frame ───────────────┘
/// ```
///
/// A frame starts at a packet with S=1 and PID=0 and ends at the packet carrying the
/// marker bit; every packet in between shares its RTP timestamp. A frame with a gap in
/// it, a malformed packet, a missing marker (a new timestamp arrives first) or more than
/// `maxFrameBytes` of data is dropped, and so is every frame after it until the next key
/// frame, because delta frames refer to the frames before them. A gap between frames
/// also waits for a key frame: the missing packets may have held a whole frame. The
/// assembler starts out waiting, so a recording begins at a key frame. Empty payloads
/// (padding-only packets) are skipped.
///
/// A key frame's header (RFC 6386 §9.1) gives the picture size:
///
/// ```
///  byte 0..2  frame tag: bit 0 of byte 0 is P (0 = key frame)
///  byte 3..5  start code 0x9d 0x01 0x2a
///  byte 6..7  width:  14 bits, little-endian; top 2 bits horizontal scale
///  byte 8..9  height: 14 bits, little-endian; top 2 bits vertical scale
/// ```
public struct VP8FrameAssembler: Sendable {
    /// One complete VP8 frame, as a decoder or an IVF/WebM writer takes it.
    public struct Frame: Sendable, Equatable {
        public var bytes: [UInt8]
        /// The RTP timestamp shared by the frame's packets.
        public var timestamp: UInt32
        public var keyframe: Bool
        /// The picture size from a key frame's header; nil for delta frames.
        public var width: Int?
        public var height: Int?

        public init(bytes: [UInt8], timestamp: UInt32, keyframe: Bool, width: Int? = nil, height: Int? = nil) {
            self.bytes = bytes
            self.timestamp = timestamp
            self.keyframe = keyframe
            self.width = width
            self.height = height
        }
    }

    /// Frames larger than this are dropped rather than held.
    public let maxFrameBytes: Int

    /// True until a key frame completes, and again after any drop.
    public private(set) var waitingForKeyframe = true
    /// Frames begun (or seen starting) but not returned.
    public private(set) var framesDropped = 0

    /// Whether the caller should ask the sender for a key frame (RTCP PLI or FIR).
    public var needsKeyframe: Bool { waitingForKeyframe }

    /// The frame being assembled, when one is.
    private var assembling = false
    private var timestamp: UInt32 = 0
    private var keyframe = false
    private var buffer: [UInt8] = []
    /// Packets with this timestamp belong to a frame already dropped: ignored quietly.
    private var discarding: UInt32?

    public init(maxFrameBytes: Int = 4 << 20) {
        precondition(maxFrameBytes > 0)
        self.maxFrameBytes = maxFrameBytes
    }

    /// Takes the next payload in sequence order; returns a frame when its last packet arrives.
    ///
    /// `gapBefore` says that sequence numbers were skipped just before this packet.
    public mutating func push(timestamp: UInt32, marker: Bool, gapBefore: Bool, payload: UnsafeRawBufferPointer) -> Frame? {
        if assembling, timestamp != self.timestamp {
            // The frame in progress never saw its marker.
            drop()
        }
        if gapBefore {
            if assembling { drop() } else { waitingForKeyframe = true }
        }
        // An empty payload (padding only) carries nothing to lose.
        guard !payload.isEmpty else { return nil }
        guard let base = payload.baseAddress, let descriptor = VP8PayloadDescriptor(base, length: payload.count),
              descriptor.length < payload.count else {
            // Unreadable: as good as lost.
            if assembling { drop() } else { waitingForKeyframe = true }
            return nil
        }
        let starts = descriptor.startOfPartition && descriptor.partitionID == 0
        if assembling, starts {
            // A second start under the same timestamp: the first attempt is incomplete.
            drop()
        }
        if !assembling {
            guard starts else {
                if discarding != timestamp {
                    // The rest of a frame whose start was never seen.
                    waitingForKeyframe = true
                    discarding = timestamp
                }
                return nil
            }
            let key = payload[descriptor.length] & 0x01 == 0
            if waitingForKeyframe, !key {
                framesDropped += 1
                discarding = timestamp
                return nil
            }
            assembling = true
            self.timestamp = timestamp
            keyframe = key
            discarding = nil
            buffer = []
        }
        let data = UnsafeRawBufferPointer(rebasing: payload[descriptor.length...])
        guard data.count <= maxFrameBytes - buffer.count else {
            drop()
            return nil
        }
        buffer.append(contentsOf: data)
        guard marker else { return nil }

        var frame = Frame(bytes: buffer, timestamp: timestamp, keyframe: keyframe)
        if keyframe, let (width, height) = Self.pictureSize(buffer) {
            frame.width = width
            frame.height = height
        }
        assembling = false
        buffer = []
        if keyframe { waitingForKeyframe = false }
        return frame
    }

    /// Width and height from a key frame's header, or nil when the start code is missing.
    public static func pictureSize(_ frame: [UInt8]) -> (width: Int, height: Int)? {
        guard frame.count >= 10, frame[0] & 0x01 == 0,
              frame[3] == 0x9D, frame[4] == 0x01, frame[5] == 0x2A else { return nil }
        let width = (Int(frame[6]) | Int(frame[7]) << 8) & 0x3FFF
        let height = (Int(frame[8]) | Int(frame[9]) << 8) & 0x3FFF
        return (width, height)
    }

    /// Discards frames until the next key frame: a frame already returned could not be used (its decoder refused it).
    public mutating func waitForKeyframe() {
        waitingForKeyframe = true
    }

    private mutating func drop() {
        framesDropped += 1
        waitingForKeyframe = true
        discarding = timestamp
        assembling = false
        buffer = []
    }
}
