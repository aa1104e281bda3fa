import CShims
import Crypto
import Wire

/// SRTP and SRTCP, one direction of a transport, on libgcrypt's AES and OpenSSL's SHA-1 with
/// keys scheduled once: AES_CM_128_HMAC_SHA1_80 (RFC 3711), which every WebRTC endpoint
/// supports, and AEAD_AES_128_GCM (RFC 7714), which browsers prefer when offered.
///
/// The packet path uses this instead of libsrtp because Debian's libsrtp2 is built on NSS,
/// which allocates and locks per packet (most of the per-packet cost in the fan-out
/// benchmark).
///
/// ```
///  AES-CM:
///  RTP:   | header (clear, authenticated) | payload (AES-CM) | auth tag (10) |
///  RTCP:  | first 8 bytes (clear) | rest (AES-CM) |E| SRTCP index (31) | auth tag (10) |
///  IV  =  (k_s * 2^16) XOR (SSRC * 2^64) XOR (index * 2^16)          (RFC 3711 §4.1.1)
///  tag =  HMAC-SHA1(k_a, authenticated portion || ROC)[0..<10]        (RFC 3711 §4.2.1)
///  AES-GCM:
///  RTP:   | header (AAD) | payload (AES-GCM) | tag (16) |
///  RTCP:  | first 8 bytes (AAD) | rest (AES-GCM) | tag (16) |E| SRTCP index (31) (AAD) |
///  IV  =  (00 00 | SSRC | ROC | SEQ) XOR salt                         (RFC 7714 §8.1)
///  IV  =  (00 00 | SSRC | 00 00 | index) XOR salt  for SRTCP          (RFC 7714 §9.1)
/// ```
///
/// Inbound, a master key identifier (MKI, RFC 3711 §3.1) the peer puts in every packet, neither encrypted nor
/// authenticated: before the HMAC tag (AES-CM), or last (AES-GCM); a packet whose MKI is another is dropped.
///
/// Confined to its transport's thread; nothing is allocated per packet (a stream record
/// per new SSRC, bounded). Package-wide: the SFU's WebRTC transports (Media), the load generator's peers (MediaLoad) and SDES-keyed SIP legs (Telephony) use it.
package final class SRTPTransform {
    package enum Direction { case inbound, outbound }

    static let masterKeyLength = 16
    /// What DTLS offers or accepts, in preference order (a DTLS server picks by its own order).
    package static let supportedProfiles: [SRTPProfile] = [.aeadAES128GCM, .aes128CMSHA1_80]
    /// Replay window in packets (RFC 3711 §3.3.2); wide enough for NACK-driven reordering.
    static let replayWindow = 1024
    static let maxStreams = 64

    struct Stream {
        var ssrc: UInt32
        var rollover: UInt32 = 0
        var lastSequence: UInt16 = 0
        var highest: UInt64 = 0
        var started = false
        /// Inbound RTCP: highest SRTCP index seen and a 64-entry window below it.
        var rtcpHighest: UInt32 = 0
        var rtcpWindow: UInt64 = 0
        var rtcpStarted = false
    }

    let direction: Direction
    package let profile: SRTPProfile
    /// AES-GCM (RFC 7714) rather than AES-CM + HMAC-SHA1.
    private let aead: Bool
    /// Bytes after an RTP payload: the HMAC-SHA1-80 tag or the GCM tag.
    package let tagLength: Int
    /// Bytes after an RTCP compound: tag and E|index.
    var rtcpTrailerLength: Int { tagLength + 4 }
    private let rtpCipher: UnsafeMutableRawPointer
    private let rtcpCipher: UnsafeMutableRawPointer
    private let rtpAuth: UnsafeMutableRawPointer
    private let rtcpAuth: UnsafeMutableRawPointer
    /// rtp salt (14) | rtcp salt (14) | iv scratch (16) | mac scratch (20) | roc scratch (4)
    private let scratch: UnsafeMutablePointer<UInt8>
    private var streams: [Stream] = []
    /// Where `streams` keeps its count and elements, and how many cache lines that spans, up to
    /// four (prefetching through the array would retain it). A transport carrying audio and video
    /// from two publishers has four streams, and the one a packet needs is anywhere among them.
    private var streamMemory: UnsafeRawPointer?
    private var streamLines = 0
    /// 16 words (1024 bits) per stream, indexed like `streams`.
    private var windows: [UInt64] = []
    private var lastHit = 0
    private var rtcpIndex: UInt32 = 0
    /// The MKI inbound packets carry (empty: none).
    private let mki: [UInt8]

    package enum SetupError: Error { case badKey, unsupportedProfile, cipher }

    /// `mki`: the master key identifier the peer's packets carry (inbound only; RFC 3711 allows up to 128 bytes).
    package init(profile: SRTPProfile = .aes128CMSHA1_80, masterKey: [UInt8], masterSalt: [UInt8], direction: Direction,
                 mki: [UInt8] = []) throws(SetupError) {
        guard profile == .aes128CMSHA1_80 || profile == .aeadAES128GCM else { throw .unsupportedProfile }
        guard masterKey.count == Self.masterKeyLength, masterSalt.count == profile.saltLength,
              mki.count <= 128, mki.isEmpty || direction == .inbound else { throw .badKey }
        self.mki = mki
        self.direction = direction
        self.profile = profile
        aead = profile == .aeadAES128GCM
        tagLength = aead ? 16 : 10
        // RFC 7714 §11: the AES-CM PRF derives GCM keys too, the 12-byte salt padded to 14.
        let salt = masterSalt + [UInt8](repeating: 0, count: 14 - masterSalt.count)
        let saltLength = aead ? 12 : 14
        let rtpKey = Self.derive(masterKey, salt, label: 0, length: 16)
        let rtpAuthKey = aead ? [] : Self.derive(masterKey, salt, label: 1, length: 20)
        let rtpSalt = Self.derive(masterKey, salt, label: 2, length: saltLength)
        let rtcpKey = Self.derive(masterKey, salt, label: 3, length: 16)
        let rtcpAuthKey = aead ? [] : Self.derive(masterKey, salt, label: 4, length: 20)
        let rtcpSalt = Self.derive(masterKey, salt, label: 5, length: saltLength)
        let gcm = aead
        func cipher(_ key: [UInt8]) -> UnsafeMutableRawPointer? {
            key.withUnsafeBufferPointer { gcm ? sb_aes128_gcm_new($0.baseAddress) : sb_aes128_ctr_new($0.baseAddress) }
        }
        guard let a = cipher(rtpKey) else { throw .cipher }
        guard let b = cipher(rtcpKey) else {
            if gcm { sb_aes128_gcm_free(a) } else { sb_aes128_ctr_free(a) }
            throw .cipher
        }
        rtpCipher = a
        rtcpCipher = b
        let stateSize = sb_hmac_sha1_state_size()
        let rtpState = UnsafeMutableRawPointer.allocate(byteCount: stateSize, alignment: 16)
        let rtcpState = UnsafeMutableRawPointer.allocate(byteCount: stateSize, alignment: 16)
        rtpAuthKey.withUnsafeBufferPointer { sb_hmac_sha1_init(rtpState, $0.baseAddress, $0.count) }
        rtcpAuthKey.withUnsafeBufferPointer { sb_hmac_sha1_init(rtcpState, $0.baseAddress, $0.count) }
        rtpAuth = rtpState
        rtcpAuth = rtcpState
        scratch = .allocate(capacity: 68)
        scratch.initialize(repeating: 0, count: 68)
        for i in 0..<saltLength {
            scratch[i] = rtpSalt[i]
            scratch[14 + i] = rtcpSalt[i]
        }
        streams.reserveCapacity(4)
    }

    deinit {
        if aead {
            sb_aes128_gcm_free(rtpCipher)
            sb_aes128_gcm_free(rtcpCipher)
        } else {
            sb_aes128_ctr_free(rtpCipher)
            sb_aes128_ctr_free(rtcpCipher)
        }
        rtpAuth.deallocate()
        rtcpAuth.deallocate()
        scratch.deallocate()
    }

    /// The AES-CM key derivation PRF with key derivation rate 0 (§4.3.1, §4.3.3).
    static func derive(_ masterKey: [UInt8], _ masterSalt: [UInt8], label: UInt8, length: Int) -> [UInt8] {
        var iv = masterSalt + [0, 0]
        iv[7] ^= label
        var out = [UInt8](repeating: 0, count: length)
        guard let ctx = masterKey.withUnsafeBufferPointer({ sb_aes128_ctr_new($0.baseAddress) }) else { return out }
        defer { sb_aes128_ctr_free(ctx) }
        iv.withUnsafeBufferPointer { ivp in
            out.withUnsafeMutableBufferPointer { _ = sb_aes128_ctr_apply(ctx, ivp.baseAddress, $0.baseAddress, length) }
        }
        return out
    }

    // MARK: Helpers

    private var ivScratch: UnsafeMutablePointer<UInt8> { scratch + 28 }
    private var macScratch: UnsafeMutablePointer<UInt8> { scratch + 44 }
    private var rocScratch: UnsafeMutablePointer<UInt8> { scratch + 64 }

    /// IV = salt XOR SSRC at bytes 4-7 XOR 48-bit index at bytes 8-13.
    @inline(__always)
    private func makeIV(salt: UnsafeMutablePointer<UInt8>, ssrc: UInt32, index: UInt64) {
        let iv = ivScratch
        for i in 0..<14 { iv[i] = salt[i] }
        iv[14] = 0
        iv[15] = 0
        iv[4] ^= UInt8(truncatingIfNeeded: ssrc >> 24)
        iv[5] ^= UInt8(truncatingIfNeeded: ssrc >> 16)
        iv[6] ^= UInt8(truncatingIfNeeded: ssrc >> 8)
        iv[7] ^= UInt8(truncatingIfNeeded: ssrc)
        for i in 0..<6 { iv[8 + i] ^= UInt8(truncatingIfNeeded: index >> UInt64(40 - 8 * i)) }
    }

    /// RFC 7714 §8.1 / §9.1: (00 00 | SSRC | middle | low) XOR the 12-byte salt, where
    /// middle|low is ROC|SEQ for SRTP and 00 00|index for SRTCP.
    @inline(__always)
    private func makeGCMIV(salt: UnsafeMutablePointer<UInt8>, ssrc: UInt32, middle: UInt32, low: UInt16) {
        let iv = ivScratch
        for i in 0..<12 { iv[i] = salt[i] }
        for i in 0..<4 {
            iv[2 + i] ^= UInt8(truncatingIfNeeded: ssrc >> UInt32(24 - 8 * i))
            iv[6 + i] ^= UInt8(truncatingIfNeeded: middle >> UInt32(24 - 8 * i))
        }
        iv[10] ^= UInt8(truncatingIfNeeded: low >> 8)
        iv[11] ^= UInt8(truncatingIfNeeded: low)
    }

    @inline(__always)
    private func findStream(_ ssrc: UInt32) -> Int? {
        if lastHit < streams.count, streams[lastHit].ssrc == ssrc { return lastHit }
        for i in streams.indices where streams[i].ssrc == ssrc {
            lastHit = i
            return i
        }
        return nil
    }

    private func addStream(_ ssrc: UInt32) -> Int? {
        guard streams.count < Self.maxStreams else { return nil }
        streams.append(Stream(ssrc: ssrc))
        streams.withUnsafeBufferPointer { elements in
            // The array's header (object header, then count and capacity: 32 bytes on 64-bit) sits
            // just before the elements, and its count is read first.
            let header = 32
            streamMemory = UnsafeRawPointer(elements.baseAddress).map { $0 - header }
            streamLines = min(4, (header + elements.count * MemoryLayout<Stream>.stride + 63) / 64 + 1)
        }
        if direction == .inbound { windows.append(contentsOf: repeatElement(0, count: Self.replayWindow / 64)) }
        lastHit = streams.count - 1
        return lastHit
    }

    /// Length of the RTP header (fixed part, CSRCs, extension), or nil if it overruns.
    @inline(__always)
    private static func headerLength(_ p: UnsafeMutableRawPointer, available: Int) -> Int? {
        guard available >= 12, Bytes.byte(p, 0) >> 6 == 2 else { return nil }
        var length = 12 + 4 * Int(Bytes.byte(p, 0) & 0x0F)
        if Bytes.byte(p, 0) & 0x10 != 0 {
            guard available >= length + 4 else { return nil }
            length += 4 + 4 * Int(Bytes.u16(p, length + 2))
        }
        return length <= available ? length : nil
    }

    @inline(__always)
    private func tagMatches(_ p: UnsafeMutableRawPointer, at offset: Int) -> Bool {
        var difference: UInt8 = 0
        for i in 0..<tagLength { difference |= macScratch[i] ^ Bytes.byte(p, offset + i) }
        return difference == 0
    }

    /// Whether the `mki.count` bytes at `offset` are our MKI (not secret: compared plainly).
    @inline(__always)
    private func mkiMatches(_ p: UnsafeMutableRawPointer, at offset: Int) -> Bool {
        for i in 0..<mki.count where Bytes.byte(p, offset + i) != mki[i] { return false }
        return true
    }

    @inline(__always)
    private func storeROC(_ roc: UInt32) {
        rocScratch[0] = UInt8(truncatingIfNeeded: roc >> 24)
        rocScratch[1] = UInt8(truncatingIfNeeded: roc >> 16)
        rocScratch[2] = UInt8(truncatingIfNeeded: roc >> 8)
        rocScratch[3] = UInt8(truncatingIfNeeded: roc)
    }

    // MARK: RTP

    /// Starts loading what `protectRTP` touches into the cache. A fan-out loop calls this a
    /// packet or two ahead: with hundreds of subscribers, each one's SRTP state is otherwise
    /// a run of cache misses by the time its turn comes.
    @inline(__always)
    package func prefetchSendState() {
        sb_prefetch(scratch)
        sb_prefetch(scratch + 64)
        if let streamMemory {
            for line in 0..<streamLines { sb_prefetch(streamMemory + 64 * line) }
        }
        sb_cipher_prefetch(rtpCipher)
        if !aead {
            sb_prefetch(rtpAuth)
            sb_prefetch(rtpAuth + 64)
        }
    }

    /// Encrypts and authenticates in place, appending the tag (RFC 3711 §3.3, RFC 7714 §8).
    @inline(__always)
    package func protectRTP(_ p: UnsafeMutableRawPointer, length: inout Int, capacity: Int) -> Bool {
        guard length + tagLength <= capacity, let header = Self.headerLength(p, available: length) else { return false }
        let ssrc = Bytes.u32(p, 8)
        let sequence = Bytes.u16(p, 2)
        guard let s = findStream(ssrc) ?? addStream(ssrc) else { return false }
        var stream = streams[s]
        var roc = stream.rollover
        if !stream.started {
            stream.started = true
            stream.lastSequence = sequence
        } else {
            let delta = Int16(bitPattern: sequence &- stream.lastSequence)
            if delta > 0 {
                if sequence < stream.lastSequence { stream.rollover &+= 1 }
                stream.lastSequence = sequence
                roc = stream.rollover
            } else if sequence > stream.lastSequence && roc > 0 {
                roc -= 1  // a retransmission from before the last wrap
            }
        }
        streams[s] = stream
        let bytes = p.assumingMemoryBound(to: UInt8.self)
        if aead {
            makeGCMIV(salt: scratch, ssrc: ssrc, middle: roc, low: sequence)
            guard sb_aes128_gcm_seal(rtpCipher, ivScratch, bytes, header, nil, 0, bytes + header, length - header, bytes + length) == 1 else {
                return false
            }
        } else {
            makeIV(salt: scratch, ssrc: ssrc, index: UInt64(roc) << 16 | UInt64(sequence))
            guard sb_aes128_ctr_apply(rtpCipher, ivScratch, bytes + header, length - header) == 1 else { return false }
            storeROC(roc)
            sb_hmac_sha1(rtpAuth, bytes, length, rocScratch, 4, macScratch)
            (p + length).copyMemory(from: macScratch, byteCount: tagLength)
        }
        length += tagLength
        return true
    }

    /// Authenticates, checks replay and decrypts in place, removing the tag (RFC 3711 §3.3 and
    /// appendix A, RFC 7714 §8).
    @inline(__always)
    package func unprotectRTP(_ p: UnsafeMutableRawPointer, length: inout Int) -> Bool {
        // | authenticated | MKI | HMAC tag |, or | authenticated | GCM tag | MKI |.
        let authenticated = length - tagLength - mki.count
        let tagAt = aead ? authenticated : authenticated + mki.count
        guard authenticated >= 12, let header = Self.headerLength(p, available: authenticated),
              mki.isEmpty || mkiMatches(p, at: aead ? authenticated + tagLength : authenticated) else { return false }
        let ssrc = Bytes.u32(p, 8)
        let sequence = Bytes.u16(p, 2)
        let existing = findStream(ssrc)
        var stream = existing.map { streams[$0] } ?? Stream(ssrc: ssrc)
        // Appendix A: guess the ROC the sender used from the highest sequence seen.
        var guess = stream.rollover
        if stream.started {
            let last = stream.lastSequence
            if last < 32_768 {
                if Int(sequence) - Int(last) > 32_768, guess > 0 { guess -= 1 }
            } else if Int(last) - 32_768 > Int(sequence) {
                guess &+= 1
            }
        }
        let index = UInt64(guess) << 16 | UInt64(sequence)
        var windowBit = -1
        if stream.started, let s = existing {
            if index <= stream.highest {
                guard stream.highest - index < UInt64(Self.replayWindow) else { return false }
                let bit = Self.windowPosition(index)
                guard windows[s * 16 + bit / 64] & (1 << UInt64(bit % 64)) == 0 else { return false }
                windowBit = bit
            }
        }
        let bytes = p.assumingMemoryBound(to: UInt8.self)
        if aead {
            makeGCMIV(salt: scratch, ssrc: ssrc, middle: guess, low: sequence)
            guard sb_aes128_gcm_open(
                rtpCipher, ivScratch, bytes, header, nil, 0, bytes + header, authenticated - header, bytes + tagAt) == 1 else {
                return false
            }
        } else {
            storeROC(guess)
            sb_hmac_sha1(rtpAuth, bytes, authenticated, rocScratch, 4, macScratch)
            guard tagMatches(p, at: tagAt) else { return false }
            makeIV(salt: scratch, ssrc: ssrc, index: index)
            guard sb_aes128_ctr_apply(rtpCipher, ivScratch, bytes + header, authenticated - header) == 1 else { return false }
        }
        // Authentic: record it.
        guard let s = existing ?? addStream(ssrc) else { return false }
        let base = s * 16
        if !stream.started || index > stream.highest {
            advanceWindow(base: base, from: stream.started ? stream.highest : nil, to: index)
            stream.highest = index
            stream.rollover = guess
            stream.lastSequence = sequence
            stream.started = true
            let bit = Self.windowPosition(index)
            windows[base + bit / 64] |= 1 << UInt64(bit % 64)
        } else if windowBit >= 0 {
            windows[base + windowBit / 64] |= 1 << UInt64(windowBit % 64)
        }
        streams[s] = stream
        length = authenticated
        return true
    }

    /// The replay window is a ring of 1024 bits: packet index i lives at bit i mod 1024, so
    /// the window moves by clearing the bits of the indices it passes over, not by shifting.
    @inline(__always)
    private static func windowPosition(_ index: UInt64) -> Int { Int(index & UInt64(replayWindow - 1)) }

    /// Moves the window's top from `highest` (nil: nothing seen yet) to `index`: the bits of
    /// the indices in between now stand for packets not seen yet.
    private func advanceWindow(base: Int, from highest: UInt64?, to index: UInt64) {
        guard let highest, index - highest < UInt64(Self.replayWindow) else {
            for i in 0..<(Self.replayWindow / 64) { windows[base + i] = 0 }
            return
        }
        var next = highest + 1
        while next < index {
            let bit = Self.windowPosition(next)
            windows[base + bit / 64] &= ~(1 << UInt64(bit % 64))
            next += 1
        }
    }

    // MARK: RTCP

    /// Encrypts (E=1) and authenticates a compound in place, appending E|index and the tag
    /// (RFC 3711 §3.4), or the GCM tag and E|index (RFC 7714 §9).
    package func protectRTCP(_ p: UnsafeMutableRawPointer, length: inout Int, capacity: Int) -> Bool {
        guard length >= 8, length + rtcpTrailerLength <= capacity else { return false }
        let index = rtcpIndex
        rtcpIndex = (rtcpIndex &+ 1) & 0x7FFF_FFFF
        let ssrc = Bytes.u32(p, 4)
        let bytes = p.assumingMemoryBound(to: UInt8.self)
        if aead {
            let word = bytes + length + tagLength
            Bytes.put32(p, length + tagLength, 0x8000_0000 | index)
            makeGCMIV(salt: scratch + 14, ssrc: ssrc, middle: index >> 16, low: UInt16(truncatingIfNeeded: index))
            guard sb_aes128_gcm_seal(rtcpCipher, ivScratch, bytes, 8, word, 4, bytes + 8, length - 8, bytes + length) == 1 else {
                return false
            }
        } else {
            makeIV(salt: scratch + 14, ssrc: ssrc, index: UInt64(index))
            guard sb_aes128_ctr_apply(rtcpCipher, ivScratch, bytes + 8, length - 8) == 1 else { return false }
            Bytes.put32(p, length, 0x8000_0000 | index)
            sb_hmac_sha1(rtcpAuth, bytes, length + 4, bytes, 0, macScratch)
            (p + length + 4).copyMemory(from: macScratch, byteCount: tagLength)
        }
        length += rtcpTrailerLength
        return true
    }

    /// Authenticates, checks replay and decrypts an SRTCP packet in place.
    package func unprotectRTCP(_ p: UnsafeMutableRawPointer, length packetLength: inout Int) -> Bool {
        // | … E|index | MKI | HMAC tag |, or | … GCM tag | E|index | MKI |: the MKI is taken out first.
        guard packetLength >= 8 + rtcpTrailerLength + mki.count,
              mki.isEmpty || mkiMatches(p, at: aead ? packetLength - mki.count : packetLength - tagLength - mki.count) else { return false }
        if !mki.isEmpty, !aead {
            (p + packetLength - tagLength - mki.count).copyMemory(from: p + packetLength - tagLength, byteCount: tagLength)
        }
        let length = packetLength - mki.count
        let bytes = p.assumingMemoryBound(to: UInt8.self)
        let ssrc = Bytes.u32(p, 4)
        if aead {
            // | header | ciphertext | tag (16) | E|index |; the AAD is the header and E|index,
            // or everything before the tag when E=0 (RFC 7714 §9.2-9.3).
            let tagAt = length - rtcpTrailerLength
            let word = Bytes.u32(p, length - 4)
            let index = word & 0x7FFF_FFFF
            makeGCMIV(salt: scratch + 14, ssrc: ssrc, middle: index >> 16, low: UInt16(truncatingIfNeeded: index))
            let encrypted = word & 0x8000_0000 != 0
            guard sb_aes128_gcm_open(
                rtcpCipher, ivScratch, bytes, encrypted ? 8 : tagAt, bytes + length - 4, 4,
                encrypted ? bytes + 8 : nil, encrypted ? tagAt - 8 : 0, bytes + tagAt) == 1,
                  acceptRTCP(ssrc: ssrc, index: index) else { return false }
            packetLength = tagAt
            return true
        }
        let authenticated = length - tagLength
        sb_hmac_sha1(rtcpAuth, bytes, authenticated, bytes, 0, macScratch)
        guard tagMatches(p, at: authenticated) else { return false }
        let word = Bytes.u32(p, authenticated - 4)
        let index = word & 0x7FFF_FFFF
        guard acceptRTCP(ssrc: ssrc, index: index) else { return false }
        let end = authenticated - 4
        if word & 0x8000_0000 != 0 {
            makeIV(salt: scratch + 14, ssrc: ssrc, index: UInt64(index))
            guard sb_aes128_ctr_apply(rtcpCipher, ivScratch, bytes + 8, end - 8) == 1 else { return false }
        }
        packetLength = end
        return true
    }

    /// SRTCP replay protection (RFC 3711 §3.3.2): a 64-entry window below the highest index.
    private func acceptRTCP(ssrc: UInt32, index: UInt32) -> Bool {
        guard let s = findStream(ssrc) ?? addStream(ssrc) else { return true }
        var stream = streams[s]
        if stream.rtcpStarted {
            if index > stream.rtcpHighest {
                let shift = index - stream.rtcpHighest
                stream.rtcpWindow = shift >= 64 ? 1 : (stream.rtcpWindow << UInt64(shift)) | 1
                stream.rtcpHighest = index
            } else {
                let back = stream.rtcpHighest - index
                guard back < 64, stream.rtcpWindow & (1 << UInt64(back)) == 0 else { return false }
                stream.rtcpWindow |= 1 << UInt64(back)
            }
        } else {
            stream.rtcpStarted = true
            stream.rtcpHighest = index
            stream.rtcpWindow = 1
        }
        streams[s] = stream
        return true
    }
}
