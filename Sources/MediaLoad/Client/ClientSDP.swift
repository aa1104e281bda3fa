import Crypto
import Media
import Wire

/// The SDP a client-role transport sends and reads (RFC 8829 offer/answer, unified plan, BUNDLE,
/// rtcp-mux): a send-only offer for publishing, an answer to the server's offer for subscribing,
/// and the server's ICE-lite candidate, credentials and fingerprint.
package enum ClientSDP {
    /// What a client needs from the server's SDP to connect.
    package struct Remote {
        package var ice: ICEParameters
        package var address: PeerAddress
        package var fingerprint: DTLSFingerprintValue
        package var setup: SDPSetupRole
        /// The DTLS role this side takes: the server said `active`, so this side is the server.
        package var localDTLSRole: DTLSRole { setup == .active ? .server : .client }
    }

    /// One send-only stream of an offer.
    package struct OutgoingStream {
        package var kind: MediaKind
        package var ssrc: UInt32
        package var codec: RTPCodec
        /// Simulcast (RFC 8853): the layers' RTP stream ids, smallest first, each packet naming its own in the RID
        /// header extension `ridExtensionID` (the server learns their SSRCs from it); empty for one stream.
        package var rids: [String]
        package var ridExtensionID: UInt8
        package init(kind: MediaKind, ssrc: UInt32, codec: RTPCodec, rids: [String] = [], ridExtensionID: UInt8 = 0) {
            self.kind = kind
            self.ssrc = ssrc
            self.codec = codec
            self.rids = rids
            self.ridExtensionID = ridExtensionID
        }
    }

    /// What a client needs from a peer's SDP (peer to peer): its candidates may trickle in later.
    package struct PeerRemote {
        package var ice: ICEParameters
        package var fingerprint: DTLSFingerprintValue
        package var setup: SDPSetupRole
        /// Its UDP candidates with numeric addresses (an mDNS `.local` name cannot be checked here).
        package var candidates: [PeerAddress]
        package var localDTLSRole: DTLSRole { setup == .active ? .server : .client }

        package init(ice: ICEParameters, fingerprint: DTLSFingerprintValue, setup: SDPSetupRole, candidates: [PeerAddress]) {
            (self.ice, self.fingerprint, self.setup, self.candidates) = (ice, fingerprint, setup, candidates)
        }
    }

    package static func peerRemote(_ text: String) throws -> PeerRemote {
        let sdp: SessionDescription
        do { sdp = try SessionDescription.parse(text) } catch { throw MediaError.invalid("SDP: \(error)") }
        guard let first = sdp.media.first, let ufrag = first.iceUfrag ?? sdp.iceUfrag, let pwd = first.icePwd ?? sdp.icePwd,
              let fingerprint = first.fingerprint ?? sdp.fingerprint else {
            throw MediaError.invalid("SDP lacks ICE credentials or a fingerprint")
        }
        return PeerRemote(
            ice: ICEParameters(usernameFragment: ufrag, password: pwd, iceLite: sdp.iceLite),
            fingerprint: DTLSFingerprintValue(algorithm: fingerprint.algorithm, value: fingerprint.value),
            setup: first.setup ?? sdp.setup ?? .actpass,
            candidates: sdp.media.flatMap(\.candidates).compactMap { candidateAddress("candidate:" + $0.attributeValue) })
    }


    /// A server's SDP read as a peer's: its one candidate (which it must have).
    package static func serverAsPeer(_ text: String) throws -> PeerRemote {
        let server = try remote(text)
        return PeerRemote(ice: server.ice, fingerprint: server.fingerprint, setup: server.setup, candidates: [server.address])
    }

    package static func remote(_ text: String) throws -> Remote {
        let sdp: SessionDescription
        do { sdp = try SessionDescription.parse(text) } catch { throw MediaError.invalid("SDP: \(error)") }
        guard let first = sdp.media.first, let ufrag = first.iceUfrag ?? sdp.iceUfrag, let pwd = first.icePwd ?? sdp.icePwd,
              let fingerprint = first.fingerprint ?? sdp.fingerprint,
              let candidate = first.candidates.first(where: { $0.transport.lowercased() == "udp" }),
              let address = PeerAddress(host: candidate.address, port: candidate.port) else {
            throw MediaError.invalid("SDP lacks ICE credentials, a UDP candidate or a fingerprint")
        }
        return Remote(
            ice: ICEParameters(usernameFragment: ufrag, password: pwd, iceLite: sdp.iceLite), address: address,
            fingerprint: DTLSFingerprintValue(algorithm: fingerprint.algorithm, value: fingerprint.value),
            setup: first.setup ?? sdp.setup ?? .actpass)
    }

    /// A send-only offer (or `direction`, e.g. send-receive for a mixer's participant), one m-line
    /// per stream; `audioLevelID` adds the RFC 6464 audio level extension to audio m-lines, which the
    /// server's speaking detection reads (and a mixer may stamp on its mix).
    package static func offer(ice: ICEParameters, certificate: DTLSCertificate, sessionID: UInt64, streams: [OutgoingStream],
                              audioLevelID: UInt8? = nil, cname: String = "load", direction: SDPDirection = .sendonly,
                              candidates: [String] = []) -> String {
        var offer = SessionDescription(origin: SDPOrigin(sessionID: sessionID, sessionVersion: 1))
        offer.lines.append(.attribute("group", "BUNDLE " + streams.indices.map(String.init).joined(separator: " ")))
        for (i, stream) in streams.enumerated() {
            let codec = stream.codec
            var m = MediaDescription(kind: stream.kind.rawValue, formats: [String(codec.payloadType)])
            m.lines.append(SDPLine("c", "IN IP4 0.0.0.0"))
            m.iceUfrag = ice.usernameFragment
            m.icePwd = ice.password
            m.fingerprint = SDPFingerprint(algorithm: "sha-256", value: certificate.fingerprintSHA256)
            m.setup = .actpass
            m.mid = String(i)
            m.direction = direction
            m.rtcpMux = true
            m.addAttribute("rtpmap", "\(codec.payloadType) \(codec.rtpmap)")
            for fb in codec.feedback { m.addAttribute("rtcp-fb", "\(codec.payloadType) \(fb)") }
            if let audioLevelID, stream.kind == .audio { m.addAttribute("extmap", "\(audioLevelID) \(RTPExtensionURI.audioLevel)") }
            addCandidates(candidates, to: &m)
            if stream.rids.isEmpty {
                m.addAttribute("ssrc", "\(stream.ssrc) cname:\(cname)")
            } else {
                m.addAttribute("extmap", "\(stream.ridExtensionID) \(RTPExtensionURI.rtpStreamID)")
                for rid in stream.rids { m.addAttribute("rid", "\(rid) send") }
                m.addAttribute("simulcast", "send " + stream.rids.joined(separator: ";"))
            }
            offer.media.append(m)
        }
        return offer.serialize()
    }

    /// A receive-only answer to the server's offer: the first format of every m-line. With
    /// `keepInactive`, m-lines the server marked inactive (a member who left) stay inactive.
    package static func answer(to offer: SessionDescription, ice: ICEParameters, certificate: DTLSCertificate, remoteSetup: SDPSetupRole,
                               keepInactive: Bool = false, candidates: [String] = []) -> String {
        var answer = SessionDescription(origin: SDPOrigin(sessionID: 1, sessionVersion: 1))
        answer.lines.append(.attribute("group", "BUNDLE " + offer.media.compactMap(\.mid).joined(separator: " ")))
        for section in offer.media {
            var m = MediaDescription(kind: section.kind, formats: Array(section.formats.prefix(1)))
            m.lines.append(SDPLine("c", "IN IP4 0.0.0.0"))
            m.iceUfrag = ice.usernameFragment
            m.icePwd = ice.password
            m.fingerprint = SDPFingerprint(algorithm: "sha-256", value: certificate.fingerprintSHA256)
            m.setup = remoteSetup == .active ? .passive : .active
            m.mid = section.mid
            m.direction = keepInactive && section.direction == .inactive ? .inactive : .recvonly
            m.rtcpMux = true
            for map in section.rtpMaps.prefix(1) { m.addAttribute("rtpmap", map.attributeValue) }
            addCandidates(candidates, to: &m)
            answer.media.append(m)
        }
        return answer.serialize()
    }

    /// This side's candidates, all of them (no trickle), for a peer that checks them (an ICE-lite server learns
    /// the client's address from its checks and needs none).
    private static func addCandidates(_ candidates: [String], to m: inout MediaDescription) {
        guard !candidates.isEmpty else { return }
        for c in candidates { m.addAttribute("candidate", c) }
        m.endOfCandidates = true
    }
}
