import Testing
import Crypto
@testable import SRTP
import SRTPReference

@Suite("SRTP transform (AES-CM + HMAC-SHA1-80, AES-GCM)")
struct SRTPTransformTests {
    static func hex(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        var i = s.startIndex
        while i < s.endIndex {
            let j = s.index(i, offsetBy: 2)
            out.append(UInt8(s[i..<j], radix: 16)!)
            i = j
        }
        return out
    }

    static let profiles: [SRTPProfile] = [.aes128CMSHA1_80, .aeadAES128GCM]
    let key = (0..<16).map { UInt8($0 &* 7 &+ 1) }
    func salt(_ profile: SRTPProfile) -> [UInt8] { (0..<profile.saltLength).map { UInt8($0 &* 3 &+ 5) } }

    func transform(_ profile: SRTPProfile, _ direction: SRTPTransform.Direction) throws -> SRTPTransform {
        try SRTPTransform(profile: profile, masterKey: key, masterSalt: salt(profile), direction: direction)
    }

    func libsrtp(_ profile: SRTPProfile, _ direction: SRTPSession.Direction) throws -> SRTPSession {
        try SRTPSession(profile: profile, key: key, salt: salt(profile), direction: direction, replayWindowSize: 1024)
    }

    func rtp(sequence: UInt16, ssrc: UInt32 = 0xCAFE_BABE, payload: Int = 160, extensionWords: Int = 0) -> [UInt8] {
        var p: [UInt8] = [extensionWords > 0 ? 0x90 : 0x80, 111, UInt8(sequence >> 8), UInt8(truncatingIfNeeded: sequence),
                          0, 0, 0x12, 0x34, UInt8(ssrc >> 24), UInt8(truncatingIfNeeded: ssrc >> 16),
                          UInt8(truncatingIfNeeded: ssrc >> 8), UInt8(truncatingIfNeeded: ssrc)]
        if extensionWords > 0 {
            p += [0xBE, 0xDE, 0, UInt8(extensionWords)] + [UInt8](repeating: 0, count: 4 * extensionWords)
        }
        p += (0..<payload).map { UInt8(truncatingIfNeeded: $0 &+ Int(sequence)) }
        return p
    }

    func protect(_ t: SRTPTransform, _ packet: [UInt8]) -> [UInt8] {
        var buffer = packet + [UInt8](repeating: 0, count: 16)
        var length = packet.count
        let ok = buffer.withUnsafeMutableBytes { t.protectRTP($0.baseAddress!, length: &length, capacity: $0.count) }
        #expect(ok)
        return Array(buffer[0..<length])
    }

    func unprotect(_ t: SRTPTransform, _ packet: [UInt8]) -> [UInt8]? {
        var buffer = packet
        var length = packet.count
        let ok = buffer.withUnsafeMutableBytes { t.unprotectRTP($0.baseAddress!, length: &length) }
        return ok ? Array(buffer[0..<length]) : nil
    }

    @Test("session keys follow the RFC 3711 appendix B.3 key derivation vectors")
    func keyDerivation() {
        let masterKey = Self.hex("E1F97A0D3E018BE0D64FA32C06DE4139")
        let masterSalt = Self.hex("0EC675AD498AFEEBB6960B3AABE6")
        #expect(SRTPTransform.derive(masterKey, masterSalt, label: 0, length: 16) == Self.hex("C61E7A93744F39EE10734AFE3FF7A087"))
        #expect(SRTPTransform.derive(masterKey, masterSalt, label: 2, length: 14) == Self.hex("30CBBC08863D8C85D49DB34A9AE1"))
        #expect(SRTPTransform.derive(masterKey, masterSalt, label: 1, length: 20) == Self.hex("CEBE321F6FF7716B6FD4AB49AF256A156D38BAA4"))
    }

    /// Payload sizes on both sides of the cipher's one-pass threshold (256 bytes) and of a block.
    static let payloads = [0, 1, 15, 16, 17, 160, 255, 256, 257, 1_100, 1_200]

    @Test("libsrtp decrypts what we protect, across the sequence wrap", arguments: profiles, [UInt16(0), 65_500])
    func toLibsrtp(profile: SRTPProfile, start: UInt16) throws {
        let ours = try transform(profile, .outbound)
        let theirs = try libsrtp(profile, .inbound)
        var s = start
        for i in 0..<100 {
            let plain = rtp(sequence: s, payload: Self.payloads[i % Self.payloads.count], extensionWords: i % 2)
            var wire = protect(ours, plain)
            #expect(wire.count == plain.count + profile.rtpTrailerLength)
            try theirs.unprotectRTP(&wire)
            #expect(wire == plain)
            s &+= 1
        }
    }

    @Test("we decrypt what libsrtp protects, and reject replays and tampering", arguments: profiles, [UInt16(1), 65_530])
    func fromLibsrtp(profile: SRTPProfile, start: UInt16) throws {
        let theirs = try libsrtp(profile, .outbound)
        let ours = try transform(profile, .inbound)
        var s = start
        var sent: [[UInt8]] = []
        for i in 0..<40 {
            var wire = rtp(sequence: s, payload: Self.payloads[i % Self.payloads.count])
            let plain = wire
            try theirs.protectRTP(&wire)
            sent.append(wire)
            #expect(unprotect(ours, wire) == plain)
            s &+= 1
        }
        #expect(unprotect(ours, sent[5]) == nil, "replay")
        // Packets not yet received, so a rejection is the tag's and not the replay window's.
        var fresh: [(plain: [UInt8], wire: [UInt8])] = []
        for payload in [160, 1_100, 160] {
            var wire = rtp(sequence: s, payload: payload)
            let plain = wire
            try theirs.protectRTP(&wire)
            fresh.append((plain, wire))
            s &+= 1
        }
        var small = fresh[0].wire
        small[20] ^= 1
        #expect(unprotect(ours, small) == nil)
        var large = fresh[1].wire  // the one-pass path
        large[600] ^= 1
        #expect(unprotect(ours, large) == nil)
        var header = fresh[2].wire
        header[1] ^= 0x80  // the marker bit is authenticated too
        #expect(unprotect(ours, header) == nil)
        for packet in fresh { #expect(unprotect(ours, packet.wire) == packet.plain) }
    }

    @Test("late packets inside the replay window are accepted once", arguments: profiles)
    func reordering(profile: SRTPProfile) throws {
        let sender = try transform(profile, .outbound)
        let receiver = try transform(profile, .inbound)
        let packets = (0..<300).map { protect(sender, rtp(sequence: UInt16((65_400 + $0) % 65_536))) }
        for (i, p) in packets.enumerated() where i % 3 != 0 { #expect(unprotect(receiver, p) != nil) }
        for (i, p) in packets.enumerated() where i % 3 == 0 { #expect(unprotect(receiver, p) != nil, "late \(i)") }
        #expect(unprotect(receiver, packets[3]) == nil)
    }

    @Test("the replay window holds the last 1024 indices across jumps and the sequence wrap", arguments: profiles)
    func replayWindowEdges(profile: SRTPProfile) throws {
        let sender = try transform(profile, .outbound)
        let receiver = try transform(profile, .inbound)
        // Sequence numbers 64,000 ... 67,999 (wrapping at 65,536), protected in order.
        let packets = (0..<4_000).map { protect(sender, rtp(sequence: UInt16((64_000 + $0) % 65_536))) }
        #expect(unprotect(receiver, packets[0]) != nil)
        #expect(unprotect(receiver, packets[1_500]) != nil)  // a jump past the whole window
        #expect(unprotect(receiver, packets[476]) == nil, "1024 behind the top: outside the window")
        #expect(unprotect(receiver, packets[477]) != nil, "1023 behind: the oldest the window holds")
        #expect(unprotect(receiver, packets[477]) == nil, "and only once")
        #expect(unprotect(receiver, packets[2_000]) != nil)  // a jump of 500 across the wrap
        #expect(unprotect(receiver, packets[1_500]) == nil, "seen before the jump, still inside the window")
        #expect(unprotect(receiver, packets[1_700]) != nil, "skipped by the jump: not seen yet")
        #expect(unprotect(receiver, packets[976]) == nil, "now 1024 behind")
        #expect(unprotect(receiver, packets[1_999]) != nil)
    }

    @Test("a peer's MKI (RFC 3711 §3.1): we check and remove it from what libsrtp protects with it, RTP and SRTCP; another MKI, or none, is refused",
          arguments: profiles, [[UInt8(1)], [0, 0, 0, 7]])
    func mki(profile: SRTPProfile, mki: [UInt8]) throws {
        let theirs = try SRTPSession(profile: profile, key: key, salt: salt(profile), direction: .outbound, replayWindowSize: 1024, mki: mki)
        let ours = try SRTPTransform(profile: profile, masterKey: key, masterSalt: salt(profile), direction: .inbound, mki: mki)
        let other = try SRTPTransform(profile: profile, masterKey: key, masterSalt: salt(profile), direction: .inbound, mki: mki.map { $0 ^ 0xFF })
        let none = try transform(profile, .inbound)
        for sequence in UInt16(1)...20 {
            var wire = rtp(sequence: sequence)
            let plain = wire
            try theirs.protectRTP(&wire)
            #expect(wire.count == plain.count + profile.rtpTrailerLength + mki.count)
            #expect(unprotect(other, wire) == nil && unprotect(none, wire) == nil)
            #expect(unprotect(ours, wire) == plain)
        }
        let report: [UInt8] = [0x81, 201, 0, 7, 0, 0, 0, 1] + [UInt8](repeating: 9, count: 24)
        func open(_ t: SRTPTransform, _ bytes: [UInt8]) -> [UInt8]? {
            var copy = bytes
            var size = copy.count
            let ok = copy.withUnsafeMutableBytes { t.unprotectRTCP($0.baseAddress!, length: &size) }
            return ok ? Array(copy[0..<size]) : nil
        }
        var protected = report
        try theirs.protectRTCP(&protected)
        #expect(protected.count == report.count + profile.rtcpTrailerLength + mki.count)
        #expect(open(other, protected) == nil && open(none, protected) == nil)
        #expect(open(ours, protected) == report)
        // Outbound keys carry no MKI here.
        #expect(throws: SRTPTransform.SetupError.self) {
            try SRTPTransform(profile: profile, masterKey: key, masterSalt: salt(profile), direction: .outbound, mki: mki)
        }
    }

    @Test("SRTCP round-trips with libsrtp in both directions", arguments: profiles)
    func rtcp(profile: SRTPProfile) throws {
        let report: [UInt8] = [0x81, 201, 0, 7, 0, 0, 0, 1] + [UInt8](repeating: 9, count: 24)
        let ours = try transform(profile, .outbound)
        let libIn = try libsrtp(profile, .inbound)
        var buffer = report + [UInt8](repeating: 0, count: 20)
        var length = report.count
        #expect(buffer.withUnsafeMutableBytes { ours.protectRTCP($0.baseAddress!, length: &length, capacity: $0.count) })
        var wire = Array(buffer[0..<length])
        try libIn.unprotectRTCP(&wire)
        #expect(wire == report)

        #expect(length == report.count + profile.rtcpTrailerLength)

        let libOut = try libsrtp(profile, .outbound)
        let oursIn = try transform(profile, .inbound)
        var protected = report
        try libOut.protectRTCP(&protected)
        func open(_ bytes: [UInt8]) -> [UInt8]? {
            var copy = bytes
            var size = copy.count
            let ok = copy.withUnsafeMutableBytes { oursIn.unprotectRTCP($0.baseAddress!, length: &size) }
            return ok ? Array(copy[0..<size]) : nil
        }
        var tampered = protected
        tampered[10] ^= 1
        #expect(open(tampered) == nil)
        #expect(open(protected) == report)
        #expect(open(protected) == nil, "replayed SRTCP index")
    }
}
