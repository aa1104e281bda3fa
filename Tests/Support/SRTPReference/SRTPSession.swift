import CSRTP
import Crypto

/// One direction of SRTP/SRTCP protection for a transport, backed by libsrtp.
///
/// A WebRTC transport owns two: `.outbound` keyed with the local keys (protect) and
/// `.inbound` keyed with the remote keys (unprotect). Both accept any SSRC, so streams
/// appear on first use (RFC 3711 §3.2.3 key sharing across SSRCs of one DTLS association).
/// Confined to the thread of the transport that owns it; packets are processed in place
/// and nothing is allocated per packet (libsrtp allocates once per new SSRC, and for
/// inbound only after that SSRC's first packet authenticates).
public final class SRTPSession {
    /// Which way the packets flow; decides libsrtp's wildcard SSRC policy.
    public enum Direction: Sendable, Hashable {
        /// Packets we receive and unprotect.
        case inbound
        /// Packets we send and protect.
        case outbound
    }

    public let profile: SRTPProfile
    public let direction: Direction
    /// The master key identifier every packet carries (RFC 3711 §3.1), empty for none.
    public let mki: [UInt8]
    private let context: OpaquePointer

    /// libsrtp keeps process-wide tables (crypto kernel); initialise them exactly once.
    /// Static `let` initialisers run once under the runtime's own lock.
    private static let libraryStatus: UInt32 = srtp_init().rawValue

    /// Creates a session from a master key and salt.
    ///
    /// - Parameters:
    ///   - replayWindowSize: packets tracked for replay protection (RFC 3711 §3.3.2);
    ///     libsrtp accepts 64...32767. Video with NACK/RTX reordering wants 1024.
    ///   - allowRepeatedTransmit: lets `protectRTP` re-protect an index it already used
    ///     (a NACK answered without RTX resends the same packet). Defaults to true outbound.
    public init(
        profile: SRTPProfile, key: [UInt8], salt: [UInt8], direction: Direction,
        replayWindowSize: Int = 128, allowRepeatedTransmit: Bool? = nil, mki: [UInt8] = []
    ) throws(SRTPError) {
        guard Self.libraryStatus == srtp_err_status_ok.rawValue else {
            throw .other(code: Self.libraryStatus)
        }
        guard key.count == profile.keyLength else {
            throw .badKeyLength(expected: profile.keyLength, actual: key.count)
        }
        guard salt.count == profile.saltLength else {
            throw .badKeyLength(expected: profile.saltLength, actual: salt.count)
        }
        guard (64...0x7FFF).contains(replayWindowSize) else { throw .other(code: srtp_err_status_bad_param.rawValue) }

        var policy = srtp_policy_t()
        switch profile {
        case .aes128CMSHA1_80:
            srtp_crypto_policy_set_rtp_default(&policy.rtp)
            srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
        case .aeadAES128GCM:
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtp)
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtcp)
        case .aeadAES256GCM:
            srtp_crypto_policy_set_aes_gcm_256_16_auth(&policy.rtp)
            srtp_crypto_policy_set_aes_gcm_256_16_auth(&policy.rtcp)
        }
        policy.ssrc.type = direction == .inbound ? ssrc_any_inbound : ssrc_any_outbound
        policy.ssrc.value = 0
        policy.window_size = UInt(replayWindowSize)
        policy.allow_repeat_tx = (allowRepeatedTransmit ?? (direction == .outbound)) ? 1 : 0
        policy.next = nil

        // libsrtp derives session keys inside srtp_create and keeps no pointer to the master key.
        var material = key + salt
        var session: OpaquePointer?
        var identifier = mki
        let status = material.withUnsafeMutableBufferPointer { buffer -> srtp_err_status_t in
            guard !identifier.isEmpty else {
                policy.key = buffer.baseAddress
                defer { policy.key = nil }
                return srtp_create(&session, &policy)
            }
            // With an MKI: the key as libsrtp's one master key of a list, named by it.
            return identifier.withUnsafeMutableBufferPointer { id -> srtp_err_status_t in
                var master = srtp_master_key_t(key: buffer.baseAddress, mki_id: id.baseAddress, mki_size: UInt32(id.count))
                return withUnsafeMutablePointer(to: &master) { one -> srtp_err_status_t in
                    var list: [UnsafeMutablePointer<srtp_master_key_t>?] = [one]
                    return list.withUnsafeMutableBufferPointer { keys -> srtp_err_status_t in
                        policy.keys = keys.baseAddress
                        policy.num_master_keys = 1
                        defer { policy.keys = nil }
                        return srtp_create(&session, &policy)
                    }
                }
            }
        }
        for i in material.indices { material[i] = 0 }
        guard status == srtp_err_status_ok, let session else { throw .other(code: status.rawValue) }
        self.context = session
        self.profile = profile
        self.direction = direction
        self.mki = mki
    }

    /// The session that unprotects what the peer sends (keyed with the remote key and salt).
    public static func inbound(
        keys: SRTPKeys, profile: SRTPProfile, replayWindowSize: Int = 128
    ) throws(SRTPError) -> SRTPSession {
        try SRTPSession(
            profile: profile, key: keys.remoteKey, salt: keys.remoteSalt, direction: .inbound,
            replayWindowSize: replayWindowSize)
    }

    /// The session that protects what we send (keyed with the local key and salt).
    public static func outbound(
        keys: SRTPKeys, profile: SRTPProfile, replayWindowSize: Int = 128
    ) throws(SRTPError) -> SRTPSession {
        try SRTPSession(
            profile: profile, key: keys.localKey, salt: keys.localSalt, direction: .outbound,
            replayWindowSize: replayWindowSize)
    }

    deinit { srtp_dealloc(context) }

    // MARK: In place, over caller-owned buffers (the packet path)

    /// Encrypts and authenticates an RTP packet in place, appending `profile.rtpTrailerLength` bytes.
    /// RFC 3711 §3.3; RFC 7714 §8 for GCM.
    @inline(__always)
    public func protectRTP(_ buffer: UnsafeMutableRawPointer, length: inout Int, capacity: Int) throws(SRTPError) {
        let needed = length + profile.rtpTrailerLength + mki.count
        guard needed <= capacity else { throw .bufferTooSmall(needed: needed, capacity: capacity) }
        var len = Int32(truncatingIfNeeded: length)
        try Self.check(mki.isEmpty ? srtp_protect(context, buffer, &len) : srtp_protect_mki(context, buffer, &len, 1, 0))
        length = Int(len)
    }

    /// Verifies and decrypts an SRTP packet in place; `length` shrinks by the trailer.
    @inline(__always)
    public func unprotectRTP(_ buffer: UnsafeMutableRawPointer, length: inout Int) throws(SRTPError) {
        var len = Int32(truncatingIfNeeded: length)
        try Self.check(mki.isEmpty ? srtp_unprotect(context, buffer, &len) : srtp_unprotect_mki(context, buffer, &len, 1))
        length = Int(len)
    }

    /// Encrypts and authenticates a (compound) RTCP packet in place, appending the SRTCP
    /// index and tag, `profile.rtcpTrailerLength` bytes (RFC 3711 §3.4).
    @inline(__always)
    public func protectRTCP(_ buffer: UnsafeMutableRawPointer, length: inout Int, capacity: Int) throws(SRTPError) {
        let needed = length + profile.rtcpTrailerLength + mki.count
        guard needed <= capacity else { throw .bufferTooSmall(needed: needed, capacity: capacity) }
        var len = Int32(truncatingIfNeeded: length)
        try Self.check(mki.isEmpty ? srtp_protect_rtcp(context, buffer, &len) : srtp_protect_rtcp_mki(context, buffer, &len, 1, 0))
        length = Int(len)
    }

    /// Verifies and decrypts an SRTCP packet in place; `length` shrinks by the trailer.
    @inline(__always)
    public func unprotectRTCP(_ buffer: UnsafeMutableRawPointer, length: inout Int) throws(SRTPError) {
        var len = Int32(truncatingIfNeeded: length)
        try Self.check(mki.isEmpty ? srtp_unprotect_rtcp(context, buffer, &len) : srtp_unprotect_rtcp_mki(context, buffer, &len, 1))
        length = Int(len)
    }

    // MARK: Array conveniences (control path and tests)

    /// Protects an RTP packet held in an array, growing it by the trailer.
    public func protectRTP(_ packet: inout [UInt8]) throws(SRTPError) {
        try transform(&packet, trailer: profile.rtpTrailerLength + mki.count) { (p, l, c) throws(SRTPError) in
            try protectRTP(p, length: &l, capacity: c)
        }
    }

    /// Unprotects an SRTP packet held in an array, shrinking it by the trailer.
    public func unprotectRTP(_ packet: inout [UInt8]) throws(SRTPError) {
        try transform(&packet, trailer: 0) { (p, l, _) throws(SRTPError) in try unprotectRTP(p, length: &l) }
    }

    /// Protects an RTCP packet held in an array, growing it by the trailer.
    public func protectRTCP(_ packet: inout [UInt8]) throws(SRTPError) {
        try transform(&packet, trailer: profile.rtcpTrailerLength + mki.count) { (p, l, c) throws(SRTPError) in
            try protectRTCP(p, length: &l, capacity: c)
        }
    }

    /// Unprotects an SRTCP packet held in an array, shrinking it by the trailer.
    public func unprotectRTCP(_ packet: inout [UInt8]) throws(SRTPError) {
        try transform(&packet, trailer: 0) { (p, l, _) throws(SRTPError) in try unprotectRTCP(p, length: &l) }
    }

    private func transform(
        _ packet: inout [UInt8], trailer: Int,
        _ body: (UnsafeMutableRawPointer, inout Int, Int) throws(SRTPError) -> Void
    ) throws(SRTPError) {
        var length = packet.count
        packet.append(contentsOf: repeatElement(0, count: trailer))
        let result: Result<Void, SRTPError> = packet.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return .failure(.other(code: srtp_err_status_bad_param.rawValue)) }
            do throws(SRTPError) {
                try body(base, &length, raw.count)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success: packet.removeLast(packet.count - length)
        case .failure(let error):
            packet.removeLast(trailer)
            throw error
        }
    }

    @inline(__always)
    private static func check(_ status: srtp_err_status_t) throws(SRTPError) {
        switch status {
        case srtp_err_status_ok: return
        case srtp_err_status_replay_fail, srtp_err_status_replay_old: throw .replay
        case srtp_err_status_auth_fail: throw .authFailure
        default: throw .other(code: status.rawValue)
        }
    }
}
