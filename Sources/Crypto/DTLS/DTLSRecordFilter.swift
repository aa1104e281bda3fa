/// The fixed 13-byte header of a DTLS 1.2 record (RFC 6347 §4.1).
///
/// Parsed before OpenSSL sees a datagram so that records no peer could have sent are
/// dropped here; see `DTLSRecordFilter` for why that cannot be left to OpenSSL.
struct DTLSRecordHeader: Sendable, Hashable {
    /// Header length: type (1), version (2), epoch (2), sequence number (6), length (2).
    static let length = 13

    var contentType: UInt8
    var version: UInt16
    var epoch: UInt16
    /// The 48-bit per-epoch record sequence number.
    var sequenceNumber: UInt64
    /// Bytes of fragment after the header.
    var fragmentLength: Int

    /// Header plus fragment.
    var recordLength: Int { Self.length + fragmentLength }

    /// Parses the record starting at `offset`. A record never spans datagrams (RFC 6347
    /// §4.1.1), so a header or fragment that runs past the end of `datagram` is malformed.
    static func parse(_ datagram: UnsafeRawBufferPointer, at offset: Int) throws(DTLSRecordError) -> DTLSRecordHeader {
        let available = datagram.count - offset
        guard available >= length else { throw .truncatedHeader(available: available) }
        let b = { (i: Int) in datagram[offset + i] }
        var sequence: UInt64 = 0
        for i in 5..<11 { sequence = sequence << 8 | UInt64(b(i)) }
        let header = DTLSRecordHeader(
            contentType: b(0),
            version: UInt16(b(1)) << 8 | UInt16(b(2)),
            epoch: UInt16(b(3)) << 8 | UInt16(b(4)),
            sequenceNumber: sequence,
            fragmentLength: Int(b(11)) << 8 | Int(b(12)))
        guard header.recordLength <= available else {
            throw .truncatedFragment(declared: header.fragmentLength, available: available - length)
        }
        return header
    }
}

/// DTLS 1.2 content types (RFC 5246 §6.2.1; heartbeat, 24, is never negotiated here).
enum DTLSContentType {
    static let changeCipherSpec: UInt8 = 20
    static let alert: UInt8 = 21
    static let handshake: UInt8 = 22
    static let applicationData: UInt8 = 23
}

/// Why a received record was dropped before reaching OpenSSL.
enum DTLSRecordError: Error, Sendable, Hashable {
    /// Fewer than 13 bytes were left for a header; the rest of the datagram is dropped.
    case truncatedHeader(available: Int)
    /// The length field points past the end of the datagram; the rest of it is dropped.
    case truncatedFragment(declared: Int, available: Int)
    /// Not one of the four DTLS 1.2 content types.
    case unknownContentType(UInt8)
    /// Not DTLS 1.2 (or, in a plaintext hello, DTLS 1.0).
    case unsupportedVersion(UInt16)
    /// An epoch the engine cannot read now: epoch 0 once connected, epoch 1 before a suite
    /// is negotiated, anything later ever.
    case unexpectedEpoch(UInt16)
    /// A content type that cannot occur in this epoch (plaintext application data, an
    /// encrypted ChangeCipherSpec).
    case contentTypeNotInEpoch(contentType: UInt8, epoch: UInt16)
    /// A plaintext record too short or too long to hold one message of its type.
    case invalidPlaintextLength(contentType: UInt8, length: Int)
    /// A protected record shorter than the negotiated suite's nonce, tag or MAC.
    case shorterThanProtection(length: Int, minimum: Int)
    /// Longer than any ciphertext (2^14 + 2048 bytes, RFC 5246 §6.2.3).
    case fragmentTooLong(Int)
}

/// How the negotiated cipher suite protects epoch-1 records, as far as their size goes.
enum DTLSRecordProtection: Sendable, Hashable {
    /// AEAD suites: a per-record explicit nonce (8 bytes for AES-GCM, RFC 5288 §3; none for
    /// ChaCha20-Poly1305, RFC 7905 §2) followed by ciphertext and the tag.
    case aead(explicitNonceLength: Int, tagLength: Int)
    /// CBC suites (RFC 5246 §6.2.3.2): explicit IV, then MAC and at least one padding byte
    /// rounded up to whole blocks. With encrypt-then-MAC (RFC 7366) it is one block plus
    /// the MAC, never less, so this bound holds either way.
    case blockCipher(blockLength: Int, macLength: Int)

    /// The shortest fragment a genuine record can have: an empty plaintext, sealed.
    var minimumFragmentLength: Int {
        switch self {
        case let .aead(nonce, tag):
            return nonce + tag
        case let .blockCipher(block, mac):
            let block = max(1, block)
            return block + (mac + 1 + block - 1) / block * block
        }
    }
}

/// Which records a `DTLSEngine` hands to OpenSSL, decided from record headers alone.
///
/// RFC 6347 §4.1.2.7: DTLS must survive invalid records (bad formatting, length, MAC, …),
/// which SHOULD be silently discarded, because anyone who can spoof a UDP datagram can send
/// them. OpenSSL 3.0 instead aborts the association on several kinds of junk:
///
/// - A protected record shorter than the suite's explicit nonce plus tag (24 bytes for
///   AES-GCM, 16 for ChaCha20-Poly1305) makes the AEAD setup in `tls1_enc` fail, which it
///   reports as a fatal internal_error (alert 80) instead of a decryption failure; with
///   CBC and encrypt-then-MAC a record shorter than the MAC is a fatal decode_error.
///   During the handshake OpenSSL buffers records of the next epoch and decrypts them
///   right after the peer's ChangeCipherSpec, so such a record received at any point of
///   the handshake, even before the ClientHello, kills it; once connected it kills the
///   association directly. (OpenSSL also pops the error it raised, so the failure surfaces
///   as SSL_ERROR_SYSCALL with an empty error queue.)
/// - Unknown content types, plaintext application data and alerts that are not two bytes
///   long are fatal unexpected_message / decode errors while handshaking.
///
/// The filter drops all of these before OpenSSL parses anything. It does not reject the
/// peer's epoch-1 Finished when it overtakes the ChangeCipherSpec: that is legitimate
/// reordering and OpenSSL's buffering handles it; with the short records gone, whatever
/// junk OpenSSL buffers fails authentication later and is discarded without harm.
///
/// Not detectable by headers: a record of plausible length with a bad tag or MAC. Under
/// AEAD suites OpenSSL drops it silently; under CBC with encrypt-then-MAC OpenSSL 3.0
/// still raises a fatal bad_record_mac.
struct DTLSRecordFilter: Sendable, Hashable {
    /// Whether epoch-0 records are still readable: only until the handshake completes.
    /// Afterwards OpenSSL ignores them anyway (the peer's retransmitted Finished, in epoch 1,
    /// is what makes it resend its last flight).
    var acceptsPlaintext: Bool
    /// How epoch 1 is protected. Nil until a cipher suite is negotiated: no genuine epoch-1
    /// record can exist before both hello messages have been exchanged.
    var protection: DTLSRecordProtection?

    /// Largest fragment of a protected record (RFC 5246 §6.2.3) and of a plaintext one (§6.2.1).
    static let maximumCiphertextLength = 16_384 + 2_048
    static let maximumPlaintextLength = 16_384
    /// A DTLS handshake message header (RFC 6347 §4.2.2); every handshake record carries one.
    static let handshakeHeaderLength = 12

    /// Checks one parsed header against what the engine can currently accept.
    func check(_ header: DTLSRecordHeader) throws(DTLSRecordError) {
        let type = header.contentType
        guard (DTLSContentType.changeCipherSpec...DTLSContentType.applicationData).contains(type) else {
            throw .unknownContentType(type)
        }
        guard header.fragmentLength <= Self.maximumCiphertextLength else {
            throw .fragmentTooLong(header.fragmentLength)
        }
        switch header.epoch {
        case 0:
            // Until the version is settled hello records may carry DTLS 1.0's number
            // (RFC 6347 §4.2.1, RFC 5246 Appendix E.1).
            guard header.version == 0xFEFD || header.version == 0xFEFF else {
                throw .unsupportedVersion(header.version)
            }
            guard acceptsPlaintext else { throw .unexpectedEpoch(header.epoch) }
            try checkPlaintext(type: type, length: header.fragmentLength)
        case 1:
            guard header.version == 0xFEFD else { throw .unsupportedVersion(header.version) }
            guard let protection else { throw .unexpectedEpoch(header.epoch) }
            // The one ChangeCipherSpec moves epoch 0 to 1 and is sent in epoch 0; there is
            // no renegotiation, so no later one.
            guard type != DTLSContentType.changeCipherSpec else {
                throw .contentTypeNotInEpoch(contentType: type, epoch: header.epoch)
            }
            let minimum = protection.minimumFragmentLength
            guard header.fragmentLength >= minimum else {
                throw .shorterThanProtection(length: header.fragmentLength, minimum: minimum)
            }
        default:
            // Epoch 2 and later need a renegotiation, which the engine refuses.
            throw .unexpectedEpoch(header.epoch)
        }
    }

    /// Epoch 0 is the null cipher: each record holds whole messages of its type.
    private func checkPlaintext(type: UInt8, length: Int) throws(DTLSRecordError) {
        switch type {
        case DTLSContentType.changeCipherSpec:
            // RFC 5246 §7.1: a single byte.
            guard length == 1 else { throw .invalidPlaintextLength(contentType: type, length: length) }
        case DTLSContentType.alert:
            // RFC 5246 §7.2: level and description. OpenSSL treats any other length as fatal.
            guard length == 2 else { throw .invalidPlaintextLength(contentType: type, length: length) }
        case DTLSContentType.handshake:
            // At least one fragment header; zero-length fragments are forbidden (RFC 5246 §6.2.1).
            guard length >= Self.handshakeHeaderLength, length <= Self.maximumPlaintextLength else {
                throw .invalidPlaintextLength(contentType: type, length: length)
            }
        default:
            // RFC 5246 §7.4.9: application data flows only after both Finished messages.
            throw .contentTypeNotInEpoch(contentType: type, epoch: 0)
        }
    }

    /// Walks the records of one datagram and sorts them into kept and dropped. Parsing stops
    /// at the first header that does not fit: without a trustworthy length there is no next
    /// record boundary.
    func screen(_ datagram: UnsafeRawBufferPointer) -> DTLSRecordScreening {
        var screening = DTLSRecordScreening()
        var offset = 0
        while offset < datagram.count {
            let header: DTLSRecordHeader
            do {
                header = try DTLSRecordHeader.parse(datagram, at: offset)
            } catch {
                screening.discarded.append(error)
                break
            }
            let record = offset..<(offset + header.recordLength)
            do {
                try check(header)
                screening.accepted.append(record)
            } catch {
                screening.discarded.append(error)
            }
            offset = record.upperBound
        }
        return screening
    }

    /// Screens a datagram held in an array.
    func screen(_ datagram: [UInt8]) -> DTLSRecordScreening {
        datagram.withUnsafeBytes { screen($0) }
    }
}

/// The outcome of `DTLSRecordFilter.screen`.
struct DTLSRecordScreening: Sendable, Hashable {
    /// Byte ranges of the records to hand to OpenSSL, in datagram order.
    var accepted: [Range<Int>] = []
    /// Why each dropped record (or the unparseable rest of the datagram) was dropped.
    var discarded: [DTLSRecordError] = []
}
