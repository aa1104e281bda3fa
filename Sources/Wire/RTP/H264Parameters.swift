/// The picture size an H.264 stream declares in its sequence parameter set (ITU-T H.264 §7.3.2.1.1), read from an
/// RTP payload (RFC 6184: a single SPS NAL unit, or one inside a STAP-A) — what a simulcast layer's key frame carries
/// in front of its IDR. Pure and bounded: a truncated or malformed SPS is nil, never a trap.
public enum H264Parameters {
    /// The width and height of the SPS in `p` (a payload); nil when it has none or it cannot be read.
    public static func keyframeSize(_ p: UnsafeRawPointer, length count: Int) -> (width: Int, height: Int)? {
        guard let sps = firstUnit(p, length: count, where: { $0 == 7 }) else { return nil }
        return pictureSize(sps: UnsafeRawBufferPointer(start: p + sps.offset, count: sps.size))
    }

    /// The first NAL unit of a payload whose type `matches`: the payload itself when it is a single NAL unit, or
    /// one aggregated in a STAP-A (RFC 6184 §5.7.1); its offset and size. nil when none matches (or a STAP-A's
    /// unit runs past its end before one did).
    @inlinable
    public static func firstUnit(_ p: UnsafeRawPointer, length count: Int, where matches: (UInt8) -> Bool) -> (offset: Int, size: Int)? {
        guard count >= 1 else { return nil }
        let type = p.load(as: UInt8.self) & 0x1F
        guard type == 24 else { return matches(type) ? (0, count) : nil }
        var o = 1
        while o + 2 < count {
            let size = Int(p.load(fromByteOffset: o, as: UInt8.self)) << 8 | Int(p.load(fromByteOffset: o + 1, as: UInt8.self))
            o += 2
            guard size > 0, o + size <= count else { return nil }
            if matches(p.load(fromByteOffset: o, as: UInt8.self) & 0x1F) { return (o, size) }
            o += size
        }
        return nil
    }

    /// The cropped picture size of an SPS NAL unit (its header byte first, emulation prevention bytes still in).
    public static func pictureSize(sps: UnsafeRawBufferPointer) -> (width: Int, height: Int)? {
        guard sps.count >= 4, sps[0] & 0x1F == 7 else { return nil }
        var r = BitReader(sps, from: 1)
        guard let profile = r.bits(8), r.bits(16) != nil, r.ue() != nil else { return nil }  // constraints, level; id
        var chromaFormat = 1
        var separateColourPlanes = false
        if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(profile) {
            guard let format = r.ue(), format <= 3 else { return nil }
            chromaFormat = format
            if format == 3 {
                guard let separate = r.bits(1) else { return nil }
                separateColourPlanes = separate == 1
            }
            guard r.ue() != nil, r.ue() != nil, r.bits(1) != nil, let matrices = r.bits(1) else { return nil }  // bit depths, qpprime
            if matrices == 1 {
                for list in 0..<(format == 3 ? 12 : 8) {
                    guard let present = r.bits(1) else { return nil }
                    if present == 1, !r.skipScalingList(size: list < 6 ? 16 : 64) { return nil }
                }
            }
        }
        guard r.ue() != nil, let pocType = r.ue() else { return nil }  // log2_max_frame_num_minus4
        switch pocType {
        case 0:
            guard r.ue() != nil else { return nil }
        case 1:
            guard r.bits(1) != nil, r.se() != nil, r.se() != nil, let cycle = r.ue(), cycle <= 255 else { return nil }
            for _ in 0..<cycle {
                guard r.se() != nil else { return nil }
            }
        case 2:
            break
        default:
            return nil
        }
        guard r.ue() != nil, r.bits(1) != nil,  // max_num_ref_frames, gaps_in_frame_num_value_allowed_flag
              let widthInMacroblocks = r.ue(), let heightInMapUnits = r.ue(), let frameMacroblocksOnly = r.bits(1) else { return nil }
        if frameMacroblocksOnly == 0, r.bits(1) == nil { return nil }  // mb_adaptive_frame_field_flag
        guard r.bits(1) != nil, let cropping = r.bits(1) else { return nil }  // direct_8x8_inference_flag
        let fieldFactor = 2 - frameMacroblocksOnly
        var width = (widthInMacroblocks + 1) * 16
        var height = fieldFactor * (heightInMapUnits + 1) * 16
        if cropping == 1 {
            guard let left = r.ue(), let right = r.ue(), let top = r.ue(), let bottom = r.ue() else { return nil }
            // §7.4.2.1.1: crop units by chroma format (ChromaArrayType 0 with separate colour planes).
            let monochrome = chromaFormat == 0 || separateColourPlanes
            let unitX = monochrome || chromaFormat == 3 ? 1 : 2
            let unitY = (monochrome || chromaFormat != 1 ? 1 : 2) * fieldFactor
            width -= unitX * (left + right)
            height -= unitY * (top + bottom)
        }
        return width > 0 && height > 0 && width <= 16_384 && height <= 16_384 ? (width, height) : nil
    }

    /// Reads an RBSP's bits from a NAL unit, dropping emulation prevention bytes (00 00 03).
    struct BitReader {
        let bytes: UnsafeRawBufferPointer
        var index: Int
        var zeros = 0
        var current: UInt8 = 0
        var left = 0

        init(_ bytes: UnsafeRawBufferPointer, from index: Int) {
            self.bytes = bytes
            self.index = index
        }

        mutating func bit() -> Int? {
            if left == 0 {
                guard index < bytes.count else { return nil }
                var byte = bytes[index]
                index += 1
                if zeros >= 2, byte == 3 {
                    guard index < bytes.count else { return nil }
                    byte = bytes[index]
                    index += 1
                    zeros = 0
                }
                zeros = byte == 0 ? zeros + 1 : 0
                current = byte
                left = 8
            }
            left -= 1
            return Int(current >> UInt8(left) & 1)
        }

        mutating func bits(_ n: Int) -> Int? {
            var value = 0
            for _ in 0..<n {
                guard let b = bit() else { return nil }
                value = value << 1 | b
            }
            return value
        }

        /// Unsigned Exp-Golomb (§9.1); nil past the end or beyond 31 leading zeros.
        mutating func ue() -> Int? {
            var leading = 0
            while true {
                guard let b = bit() else { return nil }
                if b == 1 { break }
                leading += 1
                if leading > 31 { return nil }
            }
            guard let rest = bits(leading) else { return nil }
            return (1 << leading) - 1 + rest
        }

        /// Signed Exp-Golomb (§9.1.1).
        mutating func se() -> Int? {
            guard let k = ue() else { return nil }
            return k % 2 == 1 ? (k + 1) / 2 : -(k / 2)
        }

        /// A scaling_list() (§7.3.2.1.1.1), read past.
        mutating func skipScalingList(size: Int) -> Bool {
            var last = 8, next = 8
            for _ in 0..<size {
                if next != 0 {
                    guard let delta = se(), (-128...127).contains(delta) else { return false }
                    next = (last + delta + 256) % 256
                }
                last = next == 0 ? last : next
            }
            return true
        }
    }
}
