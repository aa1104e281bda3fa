/// Tells whether an RTP payload starts a key frame, without decoding.
///
/// A consumer that starts or resumes mid-stream drops video until the next key frame,
/// since delta frames before it cannot be decoded.
enum KeyframeDetector {
    /// VP8 (RFC 7741 §4.2-4.3): the payload descriptor, then on the first packet of a
    /// partition (S=1, PID=0) the frame header's P bit, 0 for a key frame.
    ///
    /// ```
    ///   0 1 2 3 4 5 6 7
    ///  +-+-+-+-+-+-+-+-+
    ///  |X|R|N|S|R| PID | (REQUIRED)
    ///  +-+-+-+-+-+-+-+-+
    ///  |I|L|T|K| RSV   | (OPTIONAL, X=1)
    ///  |M| PictureID   | (OPTIONAL, I=1; M=1 adds a byte)
    ///  |   TL0PICIDX   | (OPTIONAL, L=1)
    ///  |TID|Y| KEYIDX  | (OPTIONAL, T=1 or K=1)
    ///  +-+-+-+-+-+-+-+-+
    /// ```
    static func isVP8Keyframe(_ p: UnsafeRawPointer, length: Int) -> Bool {
        guard length >= 1 else { return false }
        let b0 = Bytes.byte(p, 0)
        guard b0 & 0x10 != 0, b0 & 0x07 == 0 else { return false }  // S=1, PID=0
        var o = 1
        if b0 & 0x80 != 0 {
            guard length > o else { return false }
            let x = Bytes.byte(p, o)
            o += 1
            if x & 0x80 != 0 {
                guard length > o else { return false }
                o += Bytes.byte(p, o) & 0x80 != 0 ? 2 : 1
            }
            if x & 0x40 != 0 { o += 1 }
            if x & 0x30 != 0 { o += 1 }
        }
        guard length > o else { return false }
        return Bytes.byte(p, o) & 0x01 == 0
    }

    /// H.264 (RFC 6184 §5.6-5.8): an IDR slice (5) or SPS (7) as a single NAL unit, inside
    /// a STAP-A (24), or starting a FU-A (28).
    static func isH264Keyframe(_ p: UnsafeRawPointer, length: Int) -> Bool {
        guard length >= 1 else { return false }
        let type = Bytes.byte(p, 0) & 0x1F
        switch type {
        case 5, 7:
            return true
        case 24:
            var o = 1
            while o + 2 < length {
                let size = Int(Bytes.u16(p, o))
                o += 2
                guard size > 0, o + size <= length else { return false }
                let inner = Bytes.byte(p, o) & 0x1F
                if inner == 5 || inner == 7 { return true }
                o += size
            }
            return false
        case 28:
            guard length >= 2 else { return false }
            let header = Bytes.byte(p, 1)
            return header & 0x80 != 0 && (header & 0x1F == 5 || header & 0x1F == 7)
        default:
            return false
        }
    }
}
