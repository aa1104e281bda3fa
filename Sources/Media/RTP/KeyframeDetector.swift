import Wire

/// Tells whether an RTP payload starts a key frame, without decoding.
///
/// A consumer that starts or resumes mid-stream drops video until the next key frame,
/// since delta frames before it cannot be decoded.
enum KeyframeDetector {
    /// VP8 (RFC 7741 §4.2-4.3): S=1, PID=0 and the frame header's P bit clear.
    @inline(__always)
    static func isVP8Keyframe(_ p: UnsafeRawPointer, length: Int) -> Bool {
        VP8PayloadDescriptor.startsKeyframe(p, length: length)
    }

    /// H.264 (RFC 6184 §5.6-5.8): an IDR slice (5) or SPS (7) as a single NAL unit, inside
    /// a STAP-A (24), or starting a FU-A (28).
    static func isH264Keyframe(_ p: UnsafeRawPointer, length: Int) -> Bool {
        guard length >= 1 else { return false }
        if Bytes.byte(p, 0) & 0x1F == 28 {
            guard length >= 2 else { return false }
            let header = Bytes.byte(p, 1)
            return header & 0x80 != 0 && (header & 0x1F == 5 || header & 0x1F == 7)
        }
        return H264Parameters.firstUnit(p, length: length, where: { $0 == 5 || $0 == 7 }) != nil
    }
}
