import Wire

/// Offer/answer for WebRTC clients (RFC 8829 unified plan, RFC 8843 BUNDLE, RFC 8839 ICE,
/// RFC 8842 DTLS), mapped onto transports, producers and consumers.
///
/// Publishing: the client offers, we answer `recvonly` per accepted m-line with ice-lite,
/// `setup:passive`, one codec (Opus; VP8, else H.264 packetization-mode 1) plus its RTX,
/// and port 0 for anything we cannot carry. Subscribing: we offer `sendonly` m-lines with
/// our SSRCs and `setup:active` (aiortc, answering an `actpass` offer against an ICE-lite
/// peer, would pick a DTLS role contradicting its own answer), and the client answers.
public enum SDPNegotiator {
    /// What a publish offer yields: our answer and the tracks to produce.
    public struct PublishPlan: Sendable {
        public var answer: String
        public var producers: [ProducerParameters]
        public var dtls: DTLSParameters
        public var remoteUsernameFragment: String?
    }

    static let supportedFeedback: Set<String> = ["nack", "nack pli", "ccm fir", "transport-cc"]

    /// Where a browser's bandwidth estimate starts for video we receive, in kb/s
    /// (`x-google-start-bitrate`, read by libwebrtc). Its default of 300 kb/s makes a camera
    /// start at 320-480 pixels wide and take 15 s or more to grow after the estimate has;
    /// from 1,000 kb/s it starts at 960×540, and transport-wide CC feedback corrects the
    /// estimate within a second either way.
    static let videoStartBitrate = 1000

    /// Builds the answer to a publishing client's offer.
    public static func answer(offer text: String, transport: TransportInfo) throws(MediaError) -> PublishPlan {
        let offer: SessionDescription
        do { offer = try SessionDescription.parse(text) } catch { throw .invalid("SDP offer: \(error)") }
        guard let fingerprint = offer.media.compactMap(\.fingerprint).first ?? offer.fingerprint else {
            throw .invalid("SDP offer has no a=fingerprint")
        }
        let remoteUfrag = offer.media.compactMap(\.iceUfrag).first ?? offer.iceUfrag
        var answer = sessionHeader()
        var producers: [ProducerParameters] = []
        var bundled: [String] = []
        for section in offer.media {
            guard let mid = section.mid else { throw .invalid("m-line without a=mid (unified plan is required)") }
            let direction = section.direction ?? .sendrecv
            let sends = direction == .sendonly || direction == .sendrecv
            guard section.port != 0, sends, section.kind == "audio" || section.kind == "video",
                  let chosen = chooseCodec(section) else {
                answer.media.append(rejected(section))
                continue
            }
            let kind: MediaKind = section.kind == "audio" ? .audio : .video
            let extensions = extensionIDs(section.extMaps)
            var m = MediaDescription(
                kind: section.kind, port: 9, proto: section.proto,
                formats: [String(chosen.codec.payloadType)] + (chosen.rtx.map { [String($0)] } ?? []))
            m.lines.append(SDPLine("c", "IN IP4 0.0.0.0"))
            addTransportAttributes(&m, transport: transport, setup: .passive)
            m.mid = mid
            // Simulcast: each layer is an RTP stream named by the RID header extension, which the answer must keep.
            let layers = kind == .video && extensions.rid != nil ? section.simulcastSendStreams : []
            // Transport-wide CC: we send the feedback the sender's bandwidth estimator runs on.
            // abs-send-time: room in each packet for the time the server receives it, which its subscribers see.
            for ext in section.extMaps where ext.uri == RTPExtensionURI.mid || ext.uri == RTPExtensionURI.transportWideCC
                || ext.uri == RTPExtensionURI.absSendTime || (kind == .audio && ext.uri == RTPExtensionURI.audioLevel)
                || (!layers.isEmpty && (ext.uri == RTPExtensionURI.rtpStreamID || ext.uri == RTPExtensionURI.repairedRTPStreamID)) {
                m.addAttribute("extmap", "\(ext.id) \(ext.uri)")
            }
            m.direction = .recvonly
            m.rtcpMux = true
            if section.rtcpReducedSize { m.rtcpReducedSize = true }
            addCodec(&m, chosen.codec, rtx: chosen.rtx,
                     extraFormatParameters: kind == .video ? "x-google-start-bitrate=\(videoStartBitrate)" : nil)
            for rid in layers { m.addAttribute("rid", "\(rid) recv") }
            if !layers.isEmpty { m.addAttribute("simulcast", "recv " + layers.joined(separator: ";")) }
            answer.media.append(m)
            bundled.append(mid)

            // The sender's SSRCs: FID group first (primary, RTX), else the first a=ssrc.
            var ssrc: UInt32?
            var rtxSSRC: UInt32?
            if !layers.isEmpty {
                // Each layer's SSRCs are learnt from its packets' RID (or repaired RID) extension.
            } else if let fid = section.ssrcGroups.first(where: { $0.semantics == "FID" }), fid.ssrcs.count >= 2 {
                ssrc = fid.ssrcs[0]
                rtxSSRC = fid.ssrcs[1]
            } else {
                ssrc = section.ssrcs.first
            }
            let msid = section.msid ?? section.ssrcAttributes.first { $0.attribute == "msid" }?.value.flatMap(SDPMediaStreamID.init)
            producers.append(ProducerParameters(
                kind: kind, mid: mid, codec: chosen.codec, ssrc: ssrc, rtxSSRC: chosen.rtx == nil ? nil : rtxSSRC,
                rtxPayloadType: chosen.rtx, extensions: extensions,
                streamID: msid?.stream, trackID: msid?.track, simulcast: layers))
        }
        guard !producers.isEmpty else { throw .unsupported("the offer has no track we can receive (Opus, VP8, H.264)") }
        answer.lines.append(.attribute("group", SDPGroup(semantics: "BUNDLE", identifiers: bundled).attributeValue))
        let role: DTLSRole = .server
        return PublishPlan(
            answer: answer.serialize(), producers: producers,
            dtls: DTLSParameters(role: role, fingerprint: DTLSFingerprintValue(algorithm: fingerprint.algorithm, value: fingerprint.value)),
            remoteUsernameFragment: remoteUfrag)
    }

    /// Our offer to a subscribing client: one `sendonly` m-line per consumer.
    public static func subscribeOffer(transport: TransportInfo, consumers: [ConsumerParameters]) -> String {
        subscribeOffer(transport: transport, consumers: consumers, sessionID: nil, version: 2)
    }

    /// A (re-)offer keeping m-line order: `inactive` indexes are offered without a stream
    /// (still bundled, so the transport never changes); the session id stays and `version`
    /// grows with each offer (RFC 8829 §5.2.2).
    public static func subscribeOffer(
        transport: TransportInfo, consumers: [ConsumerParameters], inactive: Set<Int> = [], sessionID: UInt64?, version: UInt64
    ) -> String {
        var offer = sessionHeader()
        if let sessionID { offer.origin = SDPOrigin(sessionID: sessionID, sessionVersion: version) }
        var mids: [String] = []
        for (index, consumer) in consumers.enumerated() {
            let mid = String(index)
            mids.append(mid)
            var m = MediaDescription(kind: consumer.kind.rawValue, port: 9, formats: [String(consumer.codec.payloadType)])
            if inactive.contains(index) {
                m.lines.append(SDPLine("c", "IN IP4 0.0.0.0"))
                addTransportAttributes(&m, transport: transport, setup: .active)
                m.mid = mid
                m.direction = .inactive
                m.rtcpMux = true
                m.rtcpReducedSize = true
                addCodec(&m, consumer.codec, rtx: nil)
                offer.media.append(m)
                continue
            }
            m.lines.append(SDPLine("c", "IN IP4 0.0.0.0"))
            addTransportAttributes(&m, transport: transport, setup: .active)
            m.mid = mid
            if consumer.kind == .audio, let id = consumer.extensions.audioLevel {
                m.addAttribute("extmap", "\(id) \(RTPExtensionURI.audioLevel)")
            }
            if let id = consumer.extensions.absSendTime {
                m.addAttribute("extmap", "\(id) \(RTPExtensionURI.absSendTime)")
            }
            m.direction = .sendonly
            m.msid = SDPMediaStreamID(stream: consumer.streamID, track: consumer.trackID)
            m.rtcpMux = true
            m.rtcpReducedSize = true
            addCodec(&m, consumer.codec, rtx: consumer.rtxPayloadType)
            if let rtx = consumer.rtxPayloadType { m.formats.append(String(rtx)) }
            var ssrcs = [consumer.ssrc]
            if let rtxSSRC = consumer.rtxSSRC, consumer.rtxPayloadType != nil {
                ssrcs.append(rtxSSRC)
                m.addAttribute("ssrc-group", "FID \(consumer.ssrc) \(rtxSSRC)")
            }
            for ssrc in ssrcs {
                m.addAttribute("ssrc", "\(ssrc) cname:\(consumer.cname)")
                m.addAttribute("ssrc", "\(ssrc) msid:\(consumer.streamID) \(consumer.trackID)")
            }
            offer.media.append(m)
        }
        offer.lines.append(.attribute("group", SDPGroup(semantics: "BUNDLE", identifiers: mids).attributeValue))
        offer.lines.append(.attribute("msid-semantic", " WMS *"))
        return offer.serialize()
    }

    /// What a subscriber's answer tells us: its fingerprint, DTLS role and ICE ufrag, and
    /// which of our m-lines (by index) it rejected.
    public struct SubscribeAnswer: Sendable {
        public var dtls: DTLSParameters
        public var remoteUsernameFragment: String?
        public var rejectedIndexes: [Int]
        /// M-lines (by index) whose answer kept our RTX payload type: retransmit over RTX there.
        public var retransmissionIndexes: [Int]
    }

    public static func parseSubscribeAnswer(_ text: String) throws(MediaError) -> SubscribeAnswer {
        let answer: SessionDescription
        do { answer = try SessionDescription.parse(text) } catch { throw .invalid("SDP answer: \(error)") }
        guard let fingerprint = answer.media.compactMap(\.fingerprint).first ?? answer.fingerprint else {
            throw .invalid("SDP answer has no a=fingerprint")
        }
        let setup = answer.media.compactMap(\.setup).first ?? answer.setup ?? .active
        // We offered active; a peer answering active anyway gets the server side.
        let role: DTLSRole = setup == .active ? .server : .client
        let rejected = answer.media.enumerated().filter { $0.element.port == 0 }.map(\.offset)
        let rtx = answer.media.enumerated().filter { _, m in
            m.port != 0 && m.rtpMaps.contains { $0.encodingName.lowercased() == "rtx" }
        }.map(\.offset)
        return SubscribeAnswer(
            dtls: DTLSParameters(role: role, fingerprint: DTLSFingerprintValue(algorithm: fingerprint.algorithm, value: fingerprint.value)),
            remoteUsernameFragment: answer.media.compactMap(\.iceUfrag).first ?? answer.iceUfrag,
            rejectedIndexes: rejected, retransmissionIndexes: rtx)
    }

    // MARK: Pieces

    static func sessionHeader() -> SessionDescription {
        var sdp = SessionDescription(origin: SDPOrigin(sessionID: UInt64.random(in: 1...UInt64(Int64.max)), sessionVersion: 2))
        sdp.iceLite = true
        return sdp
    }

    static func addTransportAttributes(_ m: inout MediaDescription, transport: TransportInfo, setup: SDPSetupRole) {
        m.iceUfrag = transport.iceParameters.usernameFragment
        m.icePwd = transport.iceParameters.password
        m.fingerprint = SDPFingerprint(algorithm: transport.fingerprint.algorithm, value: transport.fingerprint.value)
        m.setup = setup
        for candidate in transport.candidates { m.addAttribute("candidate", candidate.sdpValue) }
        m.endOfCandidates = true
    }

    static func addCodec(_ m: inout MediaDescription, _ codec: RTPCodec, rtx: UInt8?, extraFormatParameters: String? = nil) {
        m.addAttribute("rtpmap", "\(codec.payloadType) \(codec.rtpmap)")
        for fb in codec.feedback { m.addAttribute("rtcp-fb", "\(codec.payloadType) \(fb)") }
        let format = ([codec.formatParameters] + [extraFormatParameters].compactMap { $0 }).filter { !$0.isEmpty }.joined(separator: ";")
        if !format.isEmpty { m.addAttribute("fmtp", "\(codec.payloadType) \(format)") }
        if let rtx {
            m.addAttribute("rtpmap", "\(rtx) rtx/\(codec.clockRate)")
            m.addAttribute("fmtp", "\(rtx) apt=\(codec.payloadType)")
        }
    }

    static func rejected(_ section: MediaDescription) -> MediaDescription {
        var m = MediaDescription(kind: section.kind, port: 0, proto: section.proto, formats: Array(section.formats.prefix(1)))
        m.lines.append(SDPLine("c", "IN IP4 0.0.0.0"))
        if let mid = section.mid { m.mid = mid }
        m.direction = .inactive
        return m
    }

    /// Opus for audio; VP8, else H.264 packetization-mode 1, for video; with the offer's
    /// payload type, the feedback we support, and its RTX payload type.
    static func chooseCodec(_ section: MediaDescription) -> (codec: RTPCodec, rtx: UInt8?)? {
        let maps = section.rtpMaps
        func make(_ map: SDPRTPMap, kind: MediaKind) -> RTPCodec {
            let feedback = section.rtcpFeedback(payloadType: map.payloadType)
                .map { fb in fb.parameter.map { "\(fb.type) \($0)" } ?? fb.type }
                .filter { supportedFeedback.contains($0) }
            return RTPCodec(
                kind: kind, name: map.encodingName, payloadType: map.payloadType, clockRate: map.clockRate,
                channels: map.channels ?? 1, formatParameters: section.formatParameters(payloadType: map.payloadType)?.parameters ?? "",
                feedback: feedback)
        }
        if section.kind == "audio" {
            guard let opus = maps.first(where: { $0.encodingName.lowercased() == "opus" && $0.clockRate == 48_000 }) else { return nil }
            return (make(opus, kind: .audio), nil)
        }
        var pick = maps.first { $0.encodingName.uppercased() == "VP8" }
        if pick == nil {
            let h264 = maps.filter {
                $0.encodingName.uppercased() == "H264"
                    && CodecCatalog.acceptsH264(formatParameters: section.formatParameters(payloadType: $0.payloadType)?.parameters ?? "")
            }
            pick = h264.first {
                (section.formatParameters(payloadType: $0.payloadType)?["profile-level-id"] ?? "").lowercased().hasPrefix("42e0")
            } ?? h264.first
        }
        guard let map = pick else { return nil }
        return (make(map, kind: .video), section.retransmissionPayloadType(for: map.payloadType))
    }

    static func extensionIDs(_ maps: [SDPExtMap]) -> RTPExtensionIDs {
        var ids = RTPExtensionIDs()
        for ext in maps where ext.id > 0 && ext.id < 256 {
            switch ext.uri {
            case RTPExtensionURI.mid: ids.mid = UInt8(ext.id)
            case RTPExtensionURI.audioLevel: ids.audioLevel = UInt8(ext.id)
            case RTPExtensionURI.absSendTime: ids.absSendTime = UInt8(ext.id)
            case RTPExtensionURI.transportWideCC: ids.transportCC = UInt8(ext.id)
            case RTPExtensionURI.rtpStreamID: ids.rid = UInt8(ext.id)
            case RTPExtensionURI.repairedRTPStreamID: ids.repairedRID = UInt8(ext.id)
            default: break
            }
        }
        return ids
    }
}
