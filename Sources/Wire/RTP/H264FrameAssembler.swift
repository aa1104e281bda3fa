/// Rebuilds H.264 access units (one picture's NAL units) from the RTP payloads of one stream, in sequence
/// order (RFC 6184, packetization mode 1: what browsers send).
///
/// ```
///  payload[0]: F | NRI | type
///   1…23  one NAL unit, whole
///   24    STAP-A: [16-bit size][NAL unit] [16-bit size][NAL unit] …
///   28    FU-A:   FU header S | E | R | type, then a piece of one NAL unit (its header rebuilt from
///                 F | NRI of byte 0 and the type in the FU header)
/// ```
///
/// An access unit is every packet of one RTP timestamp up to the one with the marker bit; it comes out as an
/// Annex B byte stream (each NAL unit after a `00 00 00 01` start code), as decoders take it. It is a key frame
/// when it holds an IDR slice (type 5). As `VP8FrameAssembler`: a unit with a gap in it, a malformed packet, a
/// missing marker or more than `maxFrameBytes` is dropped, and so is every unit after it until the next key
/// frame; a gap before a unit drops that unit too (its first packets may be what was lost); the assembler starts
/// out waiting for a key frame. Empty payloads (padding only) are skipped.
public struct H264FrameAssembler: Sendable {
    public struct Frame: Sendable, Equatable {
        /// Annex B: start code, NAL unit, start code, NAL unit, …
        public var bytes: [UInt8]
        public var timestamp: UInt32
        public var keyframe: Bool

        public init(bytes: [UInt8], timestamp: UInt32, keyframe: Bool) {
            self.bytes = bytes
            self.timestamp = timestamp
            self.keyframe = keyframe
        }

        /// The NAL units, without their start codes. Exact: emulation prevention keeps `00 00 00` and `00 00 01`
        /// out of every NAL unit, so the only `00 00 00 01` are the start codes.
        public var nalUnits: [ArraySlice<UInt8>] {
            var starts: [Int] = []
            var i = 0
            while i + 4 <= bytes.count {
                if bytes[i] == 0, bytes[i + 1] == 0, bytes[i + 2] == 0, bytes[i + 3] == 1 {
                    starts.append(i + 4)
                    i += 4
                } else {
                    i += 1
                }
            }
            return starts.enumerated().map { n, start in bytes[start..<(n + 1 < starts.count ? starts[n + 1] - 4 : bytes.count)] }
        }

        /// The unit as Matroska and MP4 carry it: each NAL unit after its 4-byte length.
        public var lengthPrefixed: [UInt8] {
            nalUnits.flatMap { nal in [UInt8(truncatingIfNeeded: nal.count >> 24), UInt8(truncatingIfNeeded: nal.count >> 16),
                                       UInt8(truncatingIfNeeded: nal.count >> 8), UInt8(truncatingIfNeeded: nal.count)] + nal }
        }

        /// The decoder configuration record (`avcC`, ISO/IEC 14496-15 §5.3.3) from the unit's first sequence and
        /// picture parameter sets; nil when it lacks either (browsers send both before each IDR slice).
        ///
        /// ```
        ///  1 | profile | compatibility | level | 0xFF (4-byte lengths) | 0xE1 (one SPS) | SPS length (u16) | SPS
        ///    | 1 (one PPS) | PPS length (u16) | PPS
        /// ```
        public var avcC: [UInt8]? {
            let nals = nalUnits
            guard let sps = nals.first(where: { $0.first.map { $0 & 0x1F == 7 } == true && $0.count >= 4 && $0.count <= 0xFFFF }),
                  let pps = nals.first(where: { $0.first.map { $0 & 0x1F == 8 } == true && $0.count <= 0xFFFF }) else { return nil }
            let s = Array(sps)
            return [1, s[1], s[2], s[3], 0xFF, 0xE1, UInt8(s.count >> 8), UInt8(s.count & 0xFF)] + s
                + [1, UInt8(pps.count >> 8), UInt8(pps.count & 0xFF)] + pps
        }
    }

    public static let startCode: [UInt8] = [0, 0, 0, 1]

    /// Units larger than this are dropped rather than held.
    public let maxFrameBytes: Int
    /// True until a key frame completes, and again after any drop.
    public private(set) var waitingForKeyframe = true
    /// Units begun (or seen) but not returned.
    public private(set) var framesDropped = 0

    /// Whether the caller should ask the sender for a key frame (RTCP PLI or FIR).
    public var needsKeyframe: Bool { waitingForKeyframe }

    private var assembling = false
    private var timestamp: UInt32 = 0
    private var keyframe = false
    /// Inside a fragmented NAL unit (an FU-A started and not ended).
    private var fragmenting = false
    private var buffer: [UInt8] = []
    /// Packets with this timestamp belong to a unit already dropped: ignored quietly.
    private var discarding: UInt32?

    public init(maxFrameBytes: Int = 4 << 20) {
        precondition(maxFrameBytes > 0)
        self.maxFrameBytes = maxFrameBytes
    }

    /// Takes the next payload in sequence order; returns an access unit when its last packet arrives.
    ///
    /// `gapBefore` says that sequence numbers were skipped just before this packet.
    public mutating func push(timestamp: UInt32, marker: Bool, gapBefore: Bool, payload: UnsafeRawBufferPointer) -> Frame? {
        if assembling, timestamp != self.timestamp {
            // The unit in progress never saw its marker.
            drop()
        }
        if gapBefore {
            // Whatever was lost may be the start of this unit (or one before it): this unit goes too.
            if assembling { drop() } else { waitingForKeyframe = true }
            discarding = timestamp
        }
        guard !payload.isEmpty else { return nil }
        if !assembling {
            guard discarding != timestamp else { return nil }
            assembling = true
            self.timestamp = timestamp
            keyframe = false
            fragmenting = false
            discarding = nil
            buffer = []
        }
        guard append(payload) else {
            drop()
            return nil
        }
        guard marker else { return nil }
        guard !fragmenting else {
            // The marker came inside a NAL unit.
            drop()
            return nil
        }
        assembling = false
        defer { buffer = [] }
        if waitingForKeyframe, !keyframe {
            framesDropped += 1
            return nil
        }
        waitingForKeyframe = false
        return Frame(bytes: buffer, timestamp: timestamp, keyframe: keyframe)
    }

    /// Discards units until the next key frame: one already returned could not be used (its decoder refused it).
    public mutating func waitForKeyframe() {
        waitingForKeyframe = true
    }

    /// Adds one payload's NAL units (or piece of one) to the unit; false when it is malformed or too large.
    private mutating func append(_ payload: UnsafeRawBufferPointer) -> Bool {
        let type = payload[0] & 0x1F
        switch type {
        case 1...23:
            guard !fragmenting else { return false }
            return add(nal: payload)
        case 24:
            guard !fragmenting else { return false }
            var at = 1
            while at < payload.count {
                guard at + 2 <= payload.count else { return false }
                let size = Int(payload[at]) << 8 | Int(payload[at + 1])
                guard size > 0, at + 2 + size <= payload.count else { return false }
                guard add(nal: UnsafeRawBufferPointer(rebasing: payload[(at + 2)..<(at + 2 + size)])) else { return false }
                at += 2 + size
            }
            return at > 1
        case 28:
            guard payload.count > 2 else { return false }
            let header = payload[1]
            let start = header & 0x80 != 0, end = header & 0x40 != 0
            let nalType = header & 0x1F
            if start {
                guard !fragmenting, nalType != 0 else { return false }
                guard fits(Self.startCode.count + 1) else { return false }
                buffer += Self.startCode
                buffer.append(payload[0] & 0xE0 | nalType)
                if nalType == 5 { keyframe = true }
                fragmenting = true
            } else {
                guard fragmenting else { return false }
            }
            let piece = UnsafeRawBufferPointer(rebasing: payload[2...])
            guard fits(piece.count) else { return false }
            buffer.append(contentsOf: piece)
            if end { fragmenting = false }
            return true
        default:
            // STAP-B, MTAP, FU-B (not in packetization mode 1) and reserved types.
            return false
        }
    }

    private mutating func add(nal: UnsafeRawBufferPointer) -> Bool {
        guard fits(Self.startCode.count + nal.count) else { return false }
        if nal[0] & 0x1F == 5 { keyframe = true }
        buffer += Self.startCode
        buffer.append(contentsOf: nal)
        return true
    }

    private func fits(_ more: Int) -> Bool { more <= maxFrameBytes - buffer.count }

    private mutating func drop() {
        framesDropped += 1
        waitingForKeyframe = true
        discarding = timestamp
        assembling = false
        fragmenting = false
        buffer = []
    }
}
