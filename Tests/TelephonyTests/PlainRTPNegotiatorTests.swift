import Testing
import Crypto
import Wire
@testable import Telephony

@Suite("Plain RTP offer/answer")
struct PlainRTPNegotiatorTests {
    static let sippOffer = """
        v=0\r
        o=user1 53655765 2353687637 IN IP4 127.0.0.1\r
        s=-\r
        c=IN IP4 127.0.0.1\r
        t=0 0\r
        m=audio 6000 RTP/AVP 8 0 101\r
        a=rtpmap:8 PCMA/8000\r
        a=rtpmap:101 telephone-event/8000\r
        a=fmtp:101 0-11,16\r

        """

    @Test("answering a SIPp-style offer picks its first codec we support, keeps DTMF")
    func answer() throws {
        let offer = try SessionDescription.parse(Self.sippOffer)
        let local = AudioSessionConfig(address: "127.0.0.1", port: 40000)
        let (sdp, n) = try PlainRTPNegotiator.answer(offer, local: local, sessionID: 1, version: 1)
        #expect(n.codec == .pcma && n.payloadType == 8 && n.telephoneEventPayloadType == 101)
        #expect(n.remoteAddress == "127.0.0.1" && n.remotePort == 6000 && n.direction == .sendrecv)
        #expect(sdp.media[0].formats == ["8", "101"] && sdp.media[0].port == 40000 && sdp.media[0].proto == "RTP/AVP")
        #expect(sdp.serialize().contains("c=IN IP4 127.0.0.1\r\n"))
        #expect(try SessionDescription.parse(sdp.serialize()) == sdp)
    }

    @Test("hold and resume mirror the direction", arguments: [
        (SDPDirection.sendonly, SDPDirection.sendrecv, SDPDirection.recvonly),
        (.inactive, .sendrecv, .inactive),
        (.recvonly, .sendrecv, .sendonly),
        (.sendrecv, .sendonly, .sendonly),
        (.sendrecv, .sendrecv, .sendrecv),
    ])
    func directions(offered: SDPDirection, local: SDPDirection, expected: SDPDirection) throws {
        var offer = PlainRTPNegotiator.offer(AudioSessionConfig(address: "127.0.0.1", port: 5000, direction: offered), sessionID: 1, version: 2)
        offer.media[0].direction = offered
        let (answer, n) = try PlainRTPNegotiator.answer(offer, local: AudioSessionConfig(address: "127.0.0.1", port: 6000, direction: local),
                                                        sessionID: 2, version: 1)
        #expect(n.direction == expected && answer.media[0].direction == expected)
        let back = try PlainRTPNegotiator.negotiated(answer: answer, offered: AudioSessionConfig(address: "127.0.0.1", port: 5000))
        #expect(back.direction == expected.reversed)
    }

    @Test("offers without a usable codec or profile are refused")
    func refusals() throws {
        let g729 = try SessionDescription.parse("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 18\r\n")
        #expect(throws: PlainRTPError.noCommonCodec) {
            try PlainRTPNegotiator.answer(g729, local: AudioSessionConfig(address: "127.0.0.1", port: 1), sessionID: 1, version: 1)
        }
        let srtp = try SessionDescription.parse("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/SAVP 0\r\n")
        #expect(throws: PlainRTPError.noUsableCrypto) {
            try PlainRTPNegotiator.answer(srtp, local: AudioSessionConfig(address: "127.0.0.1", port: 1), sessionID: 1, version: 1)
        }
        let dtls = try SessionDescription.parse("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 UDP/TLS/RTP/SAVPF 0\r\n")
        #expect(throws: PlainRTPError.noUsableCrypto, "DTLS-SRTP without a fingerprint to check") {
            try PlainRTPNegotiator.answer(dtls, local: AudioSessionConfig(address: "127.0.0.1", port: 1), sessionID: 1, version: 1)
        }
        let sctp = try SessionDescription.parse("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 UDP/DTLS/SCTP 0\r\n")
        #expect(throws: PlainRTPError.unsupportedProfile("UDP/DTLS/SCTP")) {
            try PlainRTPNegotiator.answer(sctp, local: AudioSessionConfig(address: "127.0.0.1", port: 1), sessionID: 1, version: 1)
        }
    }

    /// An offer as baresip's dtls_srtp module writes it (`mediaenc=dtls_srtp`): setup and fingerprint at the session level.
    static func dtlsOffer(setup: String = "actpass", fingerprint: String? = "SHA-256 \(String(repeating: "AB:", count: 31))CD") throws -> SessionDescription {
        try SessionDescription.parse("v=0\r\no=- 3718218065 1424525219 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            + "a=setup:\(setup)\r\n" + (fingerprint.map { "a=fingerprint:\($0)\r\n" } ?? "")
            + "m=audio 9354 UDP/TLS/RTP/SAVPF 0 8 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:8 PCMA/8000\r\na=rtpmap:101 telephone-event/8000\r\n"
            + "a=fmtp:101 0-15\r\na=sendrecv\r\na=ptime:20\r\n")
    }

    @Test("a DTLS-SRTP offer is answered in kind: our fingerprint, active unless the offerer starts; one we cannot check is refused")
    func answersDTLS() throws {
        let local = AudioSessionConfig(address: "127.0.0.1", port: 40000)
        let ours = try #require(DTLSKeying.certificate).fingerprintSHA256
        let theirs = SDPFingerprint(algorithm: "sha-256", value: String(repeating: "AB:", count: 31) + "CD")
        let (sdp, n) = try PlainRTPNegotiator.answer(try Self.dtlsOffer(), local: local, sessionID: 1, version: 1)
        #expect(sdp.media[0].proto == "UDP/TLS/RTP/SAVPF" && sdp.media[0].attributeValues("crypto").isEmpty)
        #expect(sdp.media[0].fingerprint == SDPFingerprint(algorithm: "sha-256", value: ours) && sdp.media[0].setup == .active)
        #expect(n.dtls == DTLSKeying(role: .client, remote: theirs) && n.srtp == nil)
        #expect(!sdp.media[0].hasAttribute("rtcp-mux") && !n.rtcpMux, "RTCP on its own port unless the offer multiplexes it")
        var muxed = try Self.dtlsOffer()
        muxed.media[0].addAttribute("rtcp-mux")
        let (muxAnswer, m) = try PlainRTPNegotiator.answer(muxed, local: local, sessionID: 1, version: 1)
        #expect(muxAnswer.media[0].hasAttribute("rtcp-mux") && m.rtcpMux)
        #expect(try SessionDescription.parse(sdp.serialize()) == sdp)
        let (passive, p) = try PlainRTPNegotiator.answer(try Self.dtlsOffer(setup: "active"), local: local, sessionID: 1, version: 1)
        #expect(passive.media[0].setup == .passive && p.dtls?.role == .server, "the offerer starts: we wait")
        let (_, q) = try PlainRTPNegotiator.answer(try Self.dtlsOffer(), local: AudioSessionConfig(address: "127.0.0.1", port: 1, encryption: .srtp),
                                                   sessionID: 1, version: 1)
        #expect(q.dtls != nil, "SRTP required: DTLS-SRTP is SRTP")
        for refused in [try Self.dtlsOffer(fingerprint: nil), try Self.dtlsOffer(fingerprint: "md5 AB:CD"), try Self.dtlsOffer(fingerprint: "sha-256 XY:ZZ"),
                        try Self.dtlsOffer(setup: "holdconn")] {
            #expect(throws: PlainRTPError.noUsableCrypto) { try PlainRTPNegotiator.answer(refused, local: local, sessionID: 1, version: 1) }
        }
    }

    @Test("offering DTLS-SRTP: UDP/TLS/RTP/SAVP, our fingerprint, actpass; the answer's setup makes our role; an answer without DTLS is refused")
    func offersDTLS() throws {
        let config = AudioSessionConfig(address: "127.0.0.1", port: 40000, encryption: .dtlsSrtp)
        let offer = PlainRTPNegotiator.offer(config, sessionID: 1, version: 1)
        #expect(offer.media[0].proto == "UDP/TLS/RTP/SAVP" && offer.media[0].setup == .actpass && offer.media[0].attributeValues("crypto").isEmpty)
        #expect(offer.media[0].fingerprint?.value == DTLSKeying.certificate?.fingerprintSHA256)
        #expect(offer.media[0].hasAttribute("rtcp-mux"), "one handshake for RTP and RTCP, if the answer agrees")
        func answer(_ setup: String?, fingerprint: Bool = true, proto: String = "UDP/TLS/RTP/SAVP") throws -> SessionDescription {
            try SessionDescription.parse("v=0\r\no=- 2 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 5000 \(proto) 0\r\n"
                + "a=rtpmap:0 PCMU/8000\r\n" + (setup.map { "a=setup:\($0)\r\n" } ?? "")
                + (fingerprint ? "a=fingerprint:sha-256 \(String(repeating: "01:", count: 31))02\r\n" : ""))
        }
        #expect(try PlainRTPNegotiator.negotiated(answer: answer("passive"), offered: config).dtls?.role == .client)
        #expect(try PlainRTPNegotiator.negotiated(answer: answer("passive"), offered: config).rtcpMux == false)
        var muxed = try answer("passive")
        muxed.media[0].addAttribute("rtcp-mux")
        #expect(try PlainRTPNegotiator.negotiated(answer: muxed, offered: config).rtcpMux)
        #expect(try PlainRTPNegotiator.negotiated(answer: answer("active"), offered: config).dtls?.role == .server)
        for refused in [try answer("actpass"), try answer(nil), try answer("active", fingerprint: false), try answer(nil, fingerprint: false, proto: "RTP/AVP")] {
            #expect(throws: PlainRTPError.noUsableCrypto) { try PlainRTPNegotiator.negotiated(answer: refused, offered: config) }
        }
    }

    /// An offer as baresip's srtp module writes it (`mediaenc=srtp-mand`), with `lines` as its crypto lines.
    static func sdesOffer(proto: String = "RTP/SAVP", _ lines: [String]) throws -> SessionDescription {
        try SessionDescription.parse("v=0\r\no=- 3718218065 1424525219 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            + "m=audio 9354 \(proto) 0 8 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:8 PCMA/8000\r\na=rtpmap:101 telephone-event/8000\r\n"
            + "a=fmtp:101 0-15\r\na=sendrecv\r\n" + lines.map { "a=crypto:\($0)\r\n" }.joined() + "a=ptime:20\r\n")
    }

    static let baresipKey = "qxfNyZZvmIetD6v/EXINE53qrcUSHzd8PK7xCbr8"

    @Test("an SDES offer is answered with SRTP: the accepted line's tag and suite, our own key")
    func answersSDES() throws {
        let offer = try Self.sdesOffer(["1 AES_CM_128_HMAC_SHA1_32 inline:\(Self.baresipKey)", "2 AES_CM_128_HMAC_SHA1_80 inline:\(Self.baresipKey)|2^20"])
        let local = AudioSessionConfig(address: "127.0.0.1", port: 40000)
        let (sdp, n) = try PlainRTPNegotiator.answer(offer, local: local, sessionID: 1, version: 1)
        #expect(sdp.media[0].proto == "RTP/SAVP")
        let lines = sdp.media[0].attributeValues("crypto").compactMap(SDPCrypto.init(attributeValue:))
        #expect(lines.count == 1 && lines[0].tag == 2 && lines[0].suite == "AES_CM_128_HMAC_SHA1_80")
        #expect(lines[0].keySalt == local.keySalt && lines[0].keySalt != Base64.decode(Self.baresipKey))
        #expect(n.srtp == SDESKeying(profile: .aes128CMSHA1_80, local: local.keySalt, remote: Base64.decode(Self.baresipKey)!))
        #expect(try SessionDescription.parse(sdp.serialize()) == sdp)
    }

    @Test("a key with an MKI is taken with it: the peer's packets carry it, checked on the way in; our line and packets have none")
    func answersMKI() throws {
        let offer = try Self.sdesOffer(["1 AES_CM_128_HMAC_SHA1_80 inline:\(Self.baresipKey)|2^31|1:4"])
        let (sdp, n) = try PlainRTPNegotiator.answer(offer, local: AudioSessionConfig(address: "127.0.0.1", port: 40000), sessionID: 1, version: 1)
        #expect(n.srtp?.remoteMKI == [0, 0, 0, 1] && n.srtp?.remote == Base64.decode(Self.baresipKey))
        let lines = sdp.media[0].attributeValues("crypto").compactMap(SDPCrypto.init(attributeValue:))
        #expect(lines.count == 1 && lines[0].mki == nil && lines[0].tag == 1)
        // A re-offer's new key and MKI replace them.
        let renewed = try PlainRTPNegotiator.renegotiated(n, reoffer: try Self.sdesOffer(["1 AES_CM_128_HMAC_SHA1_80 inline:\(Self.baresipKey)|2:1"]))
        #expect(renewed.srtp?.remoteMKI == [2] && renewed.srtp?.local == n.srtp?.local)
    }

    @Test("best-effort SRTP: RTP/AVP with keys is answered RTP/AVP with keys; without keys it stays plain unless SRTP is required")
    func bestEffort() throws {
        let offer = try Self.sdesOffer(proto: "RTP/AVP", ["1 AES_CM_128_HMAC_SHA1_80 inline:\(Self.baresipKey)"])
        let (sdp, n) = try PlainRTPNegotiator.answer(offer, local: AudioSessionConfig(address: "127.0.0.1", port: 1), sessionID: 1, version: 1)
        #expect(sdp.media[0].proto == "RTP/AVP" && sdp.media[0].attributeValues("crypto").count == 1 && n.srtp != nil)
        let plain = try Self.sdesOffer(proto: "RTP/AVP", [])
        let (clear, m) = try PlainRTPNegotiator.answer(plain, local: AudioSessionConfig(address: "127.0.0.1", port: 1), sessionID: 1, version: 1)
        #expect(clear.media[0].attributeValues("crypto").isEmpty && m.srtp == nil)
        #expect(throws: PlainRTPError.encryptionRequired) {
            try PlainRTPNegotiator.answer(plain, local: AudioSessionConfig(address: "127.0.0.1", port: 1, encryption: .srtp), sessionID: 1, version: 1)
        }
    }

    @Test("crypto lines this side cannot use are skipped; RTP/SAVP with none left is refused", arguments: [
        "1 AES_CM_128_HMAC_SHA1_32 inline:qxfNyZZvmIetD6v/EXINE53qrcUSHzd8PK7xCbr8",
        "1 AES_CM_128_HMAC_SHA1_80 inline:qxfNyZZvmIetD6v/EXINE53qrcUSHzd8PK7xCbr8|2^20|256:1",
        "1 AES_CM_128_HMAC_SHA1_80 inline:qxfNyZZvmIetD6v/EXINE53qrcUSHzd8PK7xCbr8 UNENCRYPTED_SRTP",
        "1 AES_CM_128_HMAC_SHA1_80 inline:c2hvcnQ=",
        "1 AES_CM_128_HMAC_SHA1_80 inline:%%%",
        "x AES_CM_128_HMAC_SHA1_80 inline:qxfNyZZvmIetD6v/EXINE53qrcUSHzd8PK7xCbr8",
        "1 AES_CM_128_HMAC_SHA1_80 qxfNyZZvmIetD6v/EXINE53qrcUSHzd8PK7xCbr8",
    ])
    func unusable(line: String) throws {
        #expect(throws: PlainRTPError.noUsableCrypto) {
            try PlainRTPNegotiator.answer(try Self.sdesOffer([line]), local: AudioSessionConfig(address: "127.0.0.1", port: 1), sessionID: 1, version: 1)
        }
    }

    @Test("best effort offered: RTP/AVP with keys; an answer with a key of ours is SRTP, one without keys plain RTP")
    func optionalOffer() throws {
        let ours = AudioSessionConfig(address: "127.0.0.1", port: 5000, encryption: .optional)
        let offer = PlainRTPNegotiator.offer(ours, sessionID: 1, version: 1)
        #expect(offer.media[0].proto == "RTP/AVP" && offer.media[0].attributeValues("crypto").count == 2)
        let (keyed, _) = try PlainRTPNegotiator.answer(offer, local: AudioSessionConfig(address: "127.0.0.1", port: 6000), sessionID: 2, version: 1)
        let back = try PlainRTPNegotiator.negotiated(answer: keyed, offered: ours)
        #expect(keyed.media[0].proto == "RTP/AVP" && back.srtp?.profile == .aes128CMSHA1_80)
        var ignored = keyed
        ignored.media[0].lines.removeAll { $0.attributeValue(named: "crypto") != nil }
        #expect(try PlainRTPNegotiator.negotiated(answer: ignored, offered: ours).srtp == nil)
        var wrongTag = ignored
        wrongTag.media[0].addAttribute("crypto", "9 AES_CM_128_HMAC_SHA1_80 inline:\(Self.baresipKey)")
        #expect(throws: PlainRTPError.noUsableCrypto) { try PlainRTPNegotiator.negotiated(answer: wrongTag, offered: ours) }
    }

    @Test("an SRTP offer and its answer key each side with the other's key; an answer without our tag is unusable")
    func offerAnswer() throws {
        let ours = AudioSessionConfig(address: "127.0.0.1", port: 5000, encryption: .srtp)
        let offer = PlainRTPNegotiator.offer(ours, sessionID: 1, version: 1)
        #expect(offer.media[0].proto == "RTP/SAVP")
        let offered = offer.media[0].attributeValues("crypto").compactMap(SDPCrypto.init(attributeValue:))
        #expect(offered.map(\.tag) == [1, 2] && offered.map(\.suite) == ["AES_CM_128_HMAC_SHA1_80", "AEAD_AES_128_GCM"])
        #expect(offered.map(\.keySalt.count) == [30, 28])
        let theirs = AudioSessionConfig(address: "127.0.0.1", port: 6000)
        let (answer, answered) = try PlainRTPNegotiator.answer(offer, local: theirs, sessionID: 2, version: 1)
        let back = try PlainRTPNegotiator.negotiated(answer: answer, offered: ours)
        #expect(back.srtp?.profile == .aes128CMSHA1_80 && answered.srtp?.profile == .aes128CMSHA1_80)
        #expect(back.srtp?.local == answered.srtp?.remote && back.srtp?.remote == answered.srtp?.local)

        var wrongTag = answer
        wrongTag.media[0].lines.removeAll { $0.attributeValue(named: "crypto") != nil }
        wrongTag.media[0].addAttribute("crypto", "7 AES_CM_128_HMAC_SHA1_80 inline:\(Self.baresipKey)")
        #expect(throws: PlainRTPError.noUsableCrypto) { try PlainRTPNegotiator.negotiated(answer: wrongTag, offered: ours) }
        var plain = answer
        plain.media[0].lines.removeAll { $0.attributeValue(named: "crypto") != nil }
        #expect(throws: PlainRTPError.noUsableCrypto) { try PlainRTPNegotiator.negotiated(answer: plain, offered: ours) }
        // Without SRTP asked for, a stray key in an answer changes nothing.
        #expect(try PlainRTPNegotiator.negotiated(answer: answer, offered: theirs).srtp == nil)
    }

    @Test("a re-offer on an established call: the peer's address, direction and keys; the codec kept while offered; our keys and DTLS role kept")
    func renegotiates() throws {
        let otherKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd"
        // SDES: held at a new address with a new key of the suite in use; only the peer's key changes.
        let (_, sdes) = try PlainRTPNegotiator.answer(try Self.sdesOffer(["1 AES_CM_128_HMAC_SHA1_80 inline:\(Self.baresipKey)"]),
                                                      local: AudioSessionConfig(address: "127.0.0.1", port: 40000), sessionID: 1, version: 1)
        var hold = try Self.sdesOffer(["3 AEAD_AES_128_GCM inline:\(Self.baresipKey)AAAAAA==", "4 AES_CM_128_HMAC_SHA1_80 inline:\(otherKey)"])
        hold.media[0].direction = .sendonly
        hold.media[0].port = 9400
        let held = try PlainRTPNegotiator.renegotiated(sdes, reoffer: hold)
        #expect(held.direction == .recvonly && held.remotePort == 9400 && held.codec == sdes.codec && held.payloadType == sdes.payloadType)
        #expect(held.srtp?.local == sdes.srtp?.local && held.srtp?.profile == .aes128CMSHA1_80 && held.srtp?.remote == Base64.decode(otherKey))
        #expect(throws: PlainRTPError.noUsableCrypto) {
            try PlainRTPNegotiator.renegotiated(sdes, reoffer: try Self.sdesOffer(["1 AEAD_AES_128_GCM inline:\(Self.baresipKey)AAAAAA=="]))
        }
        // DTLS-SRTP: a new fingerprint is taken, our role stays whatever setup the re-offer says.
        let (_, dtls) = try PlainRTPNegotiator.answer(try Self.dtlsOffer(), local: AudioSessionConfig(address: "127.0.0.1", port: 40000),
                                                      sessionID: 1, version: 1)
        let renewed = try PlainRTPNegotiator.renegotiated(dtls, reoffer: try Self.dtlsOffer(setup: "active", fingerprint: "sha-256 " + String(repeating: "CD:", count: 31) + "EF"))
        #expect(renewed.dtls?.role == dtls.dtls?.role && renewed.dtls?.role == .client)
        #expect(renewed.dtls?.remote == SDPFingerprint(algorithm: "sha-256", value: String(repeating: "CD:", count: 31) + "EF"))
        #expect(try PlainRTPNegotiator.renegotiated(dtls, reoffer: try Self.dtlsOffer()) == dtls)
        #expect(throws: PlainRTPError.noUsableCrypto) {
            try PlainRTPNegotiator.renegotiated(dtls, reoffer: try Self.sdesOffer(proto: "RTP/AVP", []))
        }
        // Another codec when ours is no longer offered; none at all is refused.
        let (_, plain) = try PlainRTPNegotiator.answer(try SessionDescription.parse(Self.sippOffer), local: AudioSessionConfig(address: "127.0.0.1", port: 1),
                                                       sessionID: 1, version: 1)
        var opus = try SessionDescription.parse(Self.sippOffer)
        opus.media[0].formats = ["111", "101"]
        opus.media[0].addAttribute("rtpmap", "111 opus/48000/2")
        let moved = try PlainRTPNegotiator.renegotiated(plain, reoffer: opus)
        #expect(moved.codec == .opus && moved.payloadType == 111 && moved.telephoneEventPayloadType == 101)
        opus.media[0].formats = ["101"]
        #expect(throws: PlainRTPError.noCommonCodec) { try PlainRTPNegotiator.renegotiated(plain, reoffer: opus) }
    }

    @Test("our offer lists PCMU, PCMA, opus and telephone-event with ptime")
    func offer() {
        let sdp = PlainRTPNegotiator.offer(AudioSessionConfig(address: "127.0.0.1", port: 7000), sessionID: 9, version: 1)
        let audio = sdp.media[0]
        #expect(audio.formats == ["0", "8", "111", "101"])
        #expect(audio.rtpMap(payloadType: 111) == SDPRTPMap(payloadType: 111, encodingName: "opus", clockRate: 48000, channels: 2))
        #expect(audio.attributeValue("ptime") == "20" && audio.direction == .sendrecv)
    }
}
