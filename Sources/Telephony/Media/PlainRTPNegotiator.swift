import Crypto
import Wire

/// SDP offer/answer for one plain RTP/AVP audio stream (RFC 3264, RFC 3551, RFC 4733), or
/// RTP/SAVP with SDES keys (RFC 4568), or UDP/TLS/RTP/SAVP keyed by DTLS on the media ports (RFC 5763).
///
/// Builds on the WebRTC codec in Wire/SDP: the same `SessionDescription`, lines and
/// attributes, with what plain RTP needs on top: `c=` addresses, static payload types,
/// `a=ptime`, direction mirroring for hold and resume (RFC 3264 §6.1, §8.4), and `a=crypto`.
///
/// SRTP: an offer with `.srtp` is RTP/SAVP with one `a=crypto` line per suite we support (`.optional`:
/// RTP/AVP with the same lines, and an answer without keys is plain RTP). An offer
/// received with a usable `a=crypto` line (RTP/SAVP, or RTP/AVP with keys, "best effort" SRTP) is
/// answered with SRTP, repeating the accepted line's tag and suite with our own key; RTP/SAVP without
/// one is refused, as is plain RTP when the local config requires SRTP.
///
/// DTLS-SRTP: an offer with `.dtlsSrtp` is UDP/TLS/RTP/SAVP with our fingerprint and `a=setup:actpass`; the
/// answer must carry the peer's fingerprint and say who starts. An offer received as UDP/TLS/RTP/SAVP(F) is
/// answered in kind (whatever the setting: it is encrypted) when it gives a fingerprint we can check.
///
/// RTCP multiplexing (RFC 5761): offered with DTLS-SRTP (one handshake then keys both), and accepted whenever
/// offered.
public enum PlainRTPNegotiator {
    public static func offer(_ config: AudioSessionConfig, sessionID: UInt64, version: UInt64) -> SessionDescription {
        let payloadTypes = config.codecs.map(\.defaultPayloadType)
        let sdes = config.encryption == .optional || config.encryption == .srtp
        let crypto = sdes ? SDESKeying.suites.enumerated().map { SDPCrypto(tag: $0 + 1, suite: $1.sdesSuite, keySalt: config.keySalt(for: $1)) } : []
        let proto = switch config.encryption {
        case .none, .optional: "RTP/AVP"
        case .srtp: "RTP/SAVP"
        case .dtlsSrtp: "UDP/TLS/RTP/SAVP"
        }
        return description(config, sessionID: sessionID, version: version, codecs: zip(config.codecs, payloadTypes).map { ($0, $1) },
                           direction: config.direction, proto: proto, crypto: crypto,
                           dtls: config.encryption == .dtlsSrtp ? DTLSKeying.localFingerprint.map { ($0, .actpass) } : nil,
                           rtcpMux: config.encryption == .dtlsSrtp)
    }

    /// Answers `offer`: the first offered voice codec we support (offerer's preference),
    /// telephone-event when both have it, the mirrored direction.
    public static func answer(_ offer: SessionDescription, local config: AudioSessionConfig, sessionID: UInt64,
                              version: UInt64) throws(PlainRTPError) -> (SessionDescription, NegotiatedAudio) {
        let remote = try read(offer)
        var chosen: [(AudioCodec, UInt8)] = []
        guard let voice = remote.codecs.first(where: { $0.0 != .telephoneEvent && config.codecs.contains($0.0) }) else {
            throw .noCommonCodec
        }
        chosen.append(voice)
        let event = remote.codecs.first { $0.0 == .telephoneEvent && config.codecs.contains(.telephoneEvent) }
        if let event { chosen.append(event) }
        var keying: SDESKeying?
        var crypto: [SDPCrypto] = []
        var dtls: DTLSKeying?
        var ours: (SDPFingerprint, SDPSetupRole)?
        if remote.dtls {
            guard let fingerprint = remote.fingerprint, let local = DTLSKeying.localFingerprint,
                  let setup = DTLSKeying.answering(remote.setup) else { throw .noUsableCrypto }
            dtls = DTLSKeying(role: DTLSKeying.role(ours: setup), remote: fingerprint)
            ours = (local, setup)
        } else if let (line, profile) = SDESKeying.usable(remote.crypto) {
            let ours = config.keySalt(for: profile)
            keying = SDESKeying(profile: profile, local: ours, remote: line)
            crypto = [SDPCrypto(tag: line.tag, suite: line.suite, keySalt: ours)]
        } else if remote.secure {
            throw .noUsableCrypto
        } else if config.encryption == .srtp || config.encryption == .dtlsSrtp {
            throw .encryptionRequired
        }
        let direction = answerDirection(offered: remote.direction, local: config.direction)
        let sdp = description(config, sessionID: sessionID, version: version, codecs: chosen, direction: direction,
                              proto: remote.proto, crypto: crypto, dtls: ours, rtcpMux: remote.rtcpMux)
        var negotiated = NegotiatedAudio(remoteAddress: remote.address, remotePort: remote.port, codec: voice.0,
                                         payloadType: voice.1, telephoneEventPayloadType: event?.1,
                                         ptime: remote.ptime ?? config.ptime, direction: direction)
        negotiated.srtp = keying
        negotiated.dtls = dtls
        negotiated.rtcpMux = remote.rtcpMux
        return (sdp, negotiated)
    }

    /// Reads the peer's answer to our offer.
    public static func negotiated(answer: SessionDescription, offered config: AudioSessionConfig) throws(PlainRTPError) -> NegotiatedAudio {
        let remote = try read(answer)
        guard let voice = remote.codecs.first(where: { $0.0 != .telephoneEvent && config.codecs.contains($0.0) }) else {
            throw .noCommonCodec
        }
        let event = remote.codecs.first { $0.0 == .telephoneEvent }
        var negotiated = NegotiatedAudio(remoteAddress: remote.address, remotePort: remote.port, codec: voice.0, payloadType: voice.1,
                                         telephoneEventPayloadType: event?.1, ptime: remote.ptime ?? config.ptime,
                                         direction: remote.direction.reversed)
        if config.encryption == .dtlsSrtp {
            // The answer says who starts; ours said either may.
            guard remote.dtls, let fingerprint = remote.fingerprint, let setup = remote.setup, setup == .active || setup == .passive else {
                throw .noUsableCrypto
            }
            negotiated.dtls = DTLSKeying(role: setup == .active ? .server : .client, remote: fingerprint)
            negotiated.rtcpMux = remote.rtcpMux  // we offered it
        } else if config.encryption == .srtp || (config.encryption == .optional && !remote.crypto.isEmpty) {
            // The answer accepts one of our lines: its tag names the suite and so our key.
            guard let line = remote.crypto.first, let (_, profile) = SDESKeying.usable([line]),
                  let offered = SDESKeying.suites.firstIndex(of: profile), line.tag == offered + 1 else { throw .noUsableCrypto }
            negotiated.srtp = SDESKeying(profile: profile, local: config.keySalt(for: profile), remote: line)
        }
        return negotiated
    }

    /// The session after the peer's re-offer on an established call (RFC 3264 §8: hold, resume, a new address,
    /// new keys, another codec), read against `current`: the peer's address and direction; our codec while the
    /// re-offer still has it, else the first of the re-offer's we speak; SDES: the peer's key of the suite in use,
    /// ours unchanged; DTLS-SRTP: the peer's fingerprint — a new one means a new association (RFC 5763 §5) —
    /// with our role as it was. Our answer is our SDP as it stands, so nothing of ours changes here.
    public static func renegotiated(_ current: NegotiatedAudio, reoffer: SessionDescription) throws(PlainRTPError) -> NegotiatedAudio {
        let remote = try read(reoffer)
        var n = current
        guard let codec = reofferedCodec(current: current.codec, offered: remote.codecs) else { throw .noCommonCodec }
        (n.codec, n.payloadType) = codec
        n.telephoneEventPayloadType = remote.codecs.first { $0.0 == .telephoneEvent }?.1
        n.remoteAddress = remote.address
        n.remotePort = remote.port
        n.direction = answerDirection(offered: remote.direction, local: .sendrecv)
        if let keying = current.srtp {
            guard let line = SDESKeying.reoffered(remote.crypto, profile: keying.profile) else { throw .noUsableCrypto }
            n.srtp = SDESKeying(profile: keying.profile, local: keying.local, remote: line)
        }
        if var keying = current.dtls {
            guard remote.dtls, let fingerprint = remote.fingerprint else { throw .noUsableCrypto }
            keying.remote = fingerprint
            n.dtls = keying
        }
        return n
    }

    /// The codec a re-offer leaves an established call with: ours while the re-offer still has it (at the re-offer's
    /// payload type), else the first of the re-offer's we speak. Our answer (`UserAgentCore.reanswer`) and the leg
    /// (`renegotiated`) both follow it.
    static func reofferedCodec(current: AudioCodec, offered: [(AudioCodec, UInt8)]) -> (AudioCodec, UInt8)? {
        offered.first { $0.0 == current } ?? offered.first { $0.0 != .telephoneEvent }
    }

    /// `media`'s codecs: the formats, their `a=rtpmap` lines (and telephone-event's `a=fmtp`), before its other attributes.
    static func setCodecs(_ codecs: [(AudioCodec, UInt8)], of media: inout MediaDescription) {
        media.formats = codecs.map { String($0.1) }
        media.removeAttributes(named: "rtpmap")
        media.removeAttributes(named: "fmtp")
        var lines: [SDPLine] = []
        for (codec, pt) in codecs {
            lines.append(.attribute("rtpmap", codec.rtpMap(payloadType: pt).attributeValue))
            if codec == .telephoneEvent { lines.append(.attribute("fmtp", "\(pt) 0-16")) }
        }
        media.lines.insert(contentsOf: lines, at: media.lines.firstIndex { $0.type == "a" } ?? media.lines.endIndex)
    }

    /// The codecs a media section lists that we speak, with their payload types.
    static func codecs(of media: MediaDescription) -> [(AudioCodec, UInt8)] {
        media.formats.compactMap { format in
            UInt8(format).flatMap { pt in AudioCodec.identify(payloadType: pt, map: media.rtpMap(payloadType: pt)).map { ($0, pt) } }
        }
    }

    /// The direction to answer with: what the offer allows, narrowed by what we want.
    static func answerDirection(offered: SDPDirection, local: SDPDirection) -> SDPDirection {
        let peerSends = offered == .sendrecv || offered == .sendonly
        let peerReceives = offered == .sendrecv || offered == .recvonly
        let weSend = peerReceives && (local == .sendrecv || local == .sendonly)
        let weReceive = peerSends && (local == .sendrecv || local == .recvonly)
        switch (weSend, weReceive) {
        case (true, true): return .sendrecv
        case (true, false): return .sendonly
        case (false, true): return .recvonly
        case (false, false): return .inactive
        }
    }

    struct Remote {
        var address: String
        var port: UInt16
        var codecs: [(AudioCodec, UInt8)]
        var ptime: Int?
        var direction: SDPDirection
        var proto: String
        var crypto: [SDPCrypto]
        /// The peer's certificate fingerprint and setup (DTLS-SRTP).
        var fingerprint: SDPFingerprint?
        var setup: SDPSetupRole?
        /// `a=rtcp-mux`.
        var rtcpMux = false

        /// RTP/SAVP(F) or UDP/TLS/RTP/SAVP(F): the media must be SRTP.
        var secure: Bool { proto.hasPrefix("RTP/SAVP") || dtls }
        /// UDP/TLS/RTP/SAVP(F): keyed by DTLS.
        var dtls: Bool { proto.hasPrefix("UDP/TLS/") }
    }

    static func read(_ sdp: SessionDescription) throws(PlainRTPError) -> Remote {
        guard let audio = sdp.media.first(where: { $0.kind == "audio" && $0.port != 0 }) else { throw .noAudioSection }
        guard ["RTP/AVP", "RTP/AVPF", "RTP/SAVP", "RTP/SAVPF", "UDP/TLS/RTP/SAVP", "UDP/TLS/RTP/SAVPF"].contains(audio.proto) else {
            throw .unsupportedProfile(audio.proto)
        }
        let connection = audio.connection ?? sdp.lines.first { $0.type == "c" }?.value
        let parts = connection?.split(separator: " ") ?? []
        guard parts.count == 3, parts[0] == "IN" else { throw .missingConnectionAddress }
        let address = String(parts[2].split(separator: "/").first ?? parts[2])
        let codecs = codecs(of: audio)
        let direction = audio.direction ?? sdp.lines.lazy.compactMap { SDPDirection(rawValue: $0.type == "a" ? $0.value : "") }.first ?? .sendrecv
        return Remote(address: address, port: audio.port, codecs: codecs, ptime: audio.attributeValue("ptime").flatMap { Int($0) },
                      direction: address == "0.0.0.0" && direction == .sendrecv ? .inactive : direction,
                      proto: audio.proto, crypto: audio.attributeValues("crypto").compactMap(SDPCrypto.init(attributeValue:)),
                      fingerprint: DTLSKeying.usableFingerprint(of: sdp, audio), setup: audio.setup ?? sdp.setup,
                      rtcpMux: audio.hasAttribute("rtcp-mux"))
    }

    private static func description(_ config: AudioSessionConfig, sessionID: UInt64, version: UInt64,
                                    codecs: [(AudioCodec, UInt8)], direction: SDPDirection, proto: String,
                                    crypto: [SDPCrypto], dtls: (SDPFingerprint, SDPSetupRole)?, rtcpMux: Bool) -> SessionDescription {
        let family = config.address.contains(":") ? "IP6" : "IP4"
        var sdp = SessionDescription(origin: SDPOrigin(username: "-", sessionID: sessionID, sessionVersion: version,
                                                       networkType: "IN", addressType: family, address: config.address),
                                     sessionName: "switchboard")
        sdp.lines.insert(SDPLine("c", "IN \(family) \(config.address)"), at: 3)
        var audio = MediaDescription(kind: "audio", port: config.port, proto: proto, formats: [])
        setCodecs(codecs, of: &audio)
        audio.addAttribute("ptime", String(config.ptime))
        for line in crypto { audio.addAttribute("crypto", line.attributeValue) }
        if let (fingerprint, setup) = dtls {
            audio.fingerprint = fingerprint
            audio.setup = setup
        }
        if rtcpMux { audio.addAttribute("rtcp-mux") }
        audio.direction = direction
        sdp.media = [audio]
        return sdp
    }
}
