import Testing
import Wire
@testable import Media

@Suite("SDP answers and offers")
struct SDPNegotiatorTests {
    let transport = TransportInfo(
        id: TransportID(rawValue: "tp-1"), router: RouterID(rawValue: "rt-1"),
        iceParameters: ICEParameters(usernameFragment: "ufragufragufrag1", password: "passwordpasswordpasswordpassword", iceLite: true),
        candidates: [ICECandidate(ip: "127.0.0.1", port: 10_000)],
        fingerprint: DTLSFingerprintValue(algorithm: "sha-256", value: "AB:CD"))

    @Test("a captured Chromium offer gets an ice-lite recvonly answer with Opus and VP8+RTX")
    func chromium() throws {
        let plan = try SDPNegotiator.answer(offer: try mediaFixture("media/chromium-publish-offer.sdp"), transport: transport)
        let answer = try SessionDescription.parse(plan.answer)
        #expect(answer.iceLite)
        #expect(answer.bundleMids == ["0", "1"])
        #expect(answer.media.count == 2)
        for m in answer.media {
            #expect(m.direction == .recvonly)
            #expect(m.setup == .passive)
            #expect(m.iceUfrag == "ufragufragufrag1")
            #expect(m.rtcpMux)
            #expect(m.candidates.first?.port == 10_000)
        }
        #expect(answer.media[0].formats == ["111"])
        #expect(answer.media[1].formats == ["96", "97"])
        #expect(answer.media[1].rtcpFeedback(payloadType: 96).contains { $0.type == "nack" && $0.parameter == "pli" })
        #expect(plan.producers.map(\.kind) == [.audio, .video])
        #expect(plan.producers[0].ssrc == 3_057_279_153)
        #expect(plan.producers[0].extensions.audioLevel == 1)
        // abs-send-time kept on both, for the server to stamp its own time in: what subscribers' estimates run on.
        for m in answer.media { #expect(m.extMaps.contains { $0.id == 2 && $0.uri == RTPExtensionURI.absSendTime }) }
        #expect(plan.producers.allSatisfy { $0.extensions.absSendTime == 2 })
        #expect(plan.producers[1].ssrc == 2_519_125_558 && plan.producers[1].rtxSSRC == 2_768_273_998)
        #expect(plan.producers[1].rtxPayloadType == 97)
        #expect(plan.dtls.role == .server)
    }

    @Test("a captured aiortc offer gets Opus 96 and VP8 97 with RTX 98")
    func aiortc() throws {
        let plan = try SDPNegotiator.answer(offer: try mediaFixture("media/aiortc-publish-offer.sdp"), transport: transport)
        let answer = try SessionDescription.parse(plan.answer)
        #expect(answer.media.map(\.formats) == [["96"], ["97", "98"]])
        #expect(plan.producers[0].codec.name == "opus" && plan.producers[0].codec.payloadType == 96)
        #expect(plan.producers[1].ssrc != nil && plan.producers[1].rtxSSRC != nil)
        #expect(plan.remoteUsernameFragment != nil)
    }

    @Test("m-lines we cannot carry are answered with port 0 and left out of BUNDLE")
    func rejects() throws {
        var offer = try SessionDescription.parse(try mediaFixture("media/chromium-publish-offer.sdp"))
        var data = MediaDescription(kind: "application", port: 9, proto: "UDP/DTLS/SCTP", formats: ["webrtc-datachannel"])
        data.mid = "2"
        offer.media.append(data)
        var recvonly = offer.media[0]
        recvonly.mid = "3"
        recvonly.direction = .recvonly
        offer.media.append(recvonly)
        let plan = try SDPNegotiator.answer(offer: offer.serialize(), transport: transport)
        let answer = try SessionDescription.parse(plan.answer)
        #expect(answer.media.map(\.port) == [9, 9, 0, 0])
        #expect(answer.media[2].mid == "2" && answer.media[3].mid == "3")
        #expect(answer.bundleMids == ["0", "1"])
        #expect(plan.producers.count == 2)
    }

    @Test("H.264-only video picks packetization-mode 1 with the constrained baseline profile")
    func h264() throws {
        var offer = try SessionDescription.parse(try mediaFixture("media/aiortc-publish-offer.sdp"))
        offer.media[1].formats.removeAll { $0 == "97" || $0 == "98" }
        offer.media[1].lines.removeAll { $0.value.hasPrefix("rtpmap:97 ") || $0.value.hasPrefix("rtpmap:98 ") }
        let plan = try SDPNegotiator.answer(offer: offer.serialize(), transport: transport)
        #expect(plan.producers[1].codec.name == "H264")
        #expect(plan.producers[1].codec.payloadType == 101)
        #expect(plan.producers[1].rtxPayloadType == 102)
    }

    @Test("an offer without a fingerprint is refused")
    func noFingerprint() throws {
        let text = try mediaFixture("media/aiortc-publish-offer.sdp").split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("a=fingerprint") }.joined(separator: "\r\n")
        #expect(throws: MediaError.self) { try SDPNegotiator.answer(offer: text, transport: transport) }
    }

    @Test("a subscribe offer lists each consumer sendonly with its SSRC, msid and setup:active")
    func subscribeOffer() throws {
        let consumer = ConsumerParameters(
            id: ConsumerID(rawValue: "cn-1"), producerID: ProducerID(rawValue: "pr-1"), kind: .video, codec: .vp8,
            ssrc: 1234, cname: "cname", streamID: "stream", trackID: "track", extensions: .consumerSide)
        let audio = ConsumerParameters(
            id: ConsumerID(rawValue: "cn-2"), producerID: ProducerID(rawValue: "pr-2"), kind: .audio, codec: .opus,
            ssrc: 5678, cname: "cname", streamID: "stream", trackID: "track2", extensions: .consumerSide)
        let offer = try SessionDescription.parse(SDPNegotiator.subscribeOffer(transport: transport, consumers: [consumer, audio]))
        #expect(offer.iceLite)
        #expect(offer.bundleMids == ["0", "1"])
        #expect(offer.media[0].direction == .sendonly)
        #expect(offer.media[0].setup == .active)
        #expect(offer.media[0].ssrcs == [1234])
        #expect(offer.media[0].msid == SDPMediaStreamID(stream: "stream", track: "track"))
        #expect(offer.media[1].formats == ["111"])
        #expect(offer.media[1].extMaps.first?.uri == RTPExtensionURI.audioLevel)
        for m in offer.media { #expect(m.extMaps.contains { $0.id == 2 && $0.uri == RTPExtensionURI.absSendTime }) }
    }

    @Test("the subscriber's setup decides our DTLS role")
    func answerRole() throws {
        let base = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:0\r\na=ice-ufrag:abcd\r\na=fingerprint:sha-256 AA:BB\r\n"
        #expect(try SDPNegotiator.parseSubscribeAnswer(base + "a=setup:passive\r\n").dtls.role == .client)
        #expect(try SDPNegotiator.parseSubscribeAnswer(base + "a=setup:active\r\n").dtls.role == .server)
        #expect(try SDPNegotiator.parseSubscribeAnswer(base).remoteUsernameFragment == "abcd")
    }

    @Test("video is offered with an RTX stream (apt, FID group); an answer keeping rtx turns it on for that m-line")
    func retransmissionStream() throws {
        let video = ConsumerParameters(
            id: ConsumerID(rawValue: "cn-1"), producerID: ProducerID(rawValue: "pr-1"), kind: .video, codec: .vp8,
            ssrc: 1234, cname: "cname", streamID: "stream", trackID: "track", extensions: .consumerSide,
            rtxSSRC: 4321, rtxPayloadType: 97)
        let offer = try SessionDescription.parse(SDPNegotiator.subscribeOffer(transport: transport, consumers: [video]))
        let m = offer.media[0]
        #expect(m.formats == ["96", "97"])
        #expect(m.rtpMaps.contains { $0.payloadType == 97 && $0.encodingName == "rtx" && $0.clockRate == 90_000 })
        #expect(m.formatParameters(payloadType: 97)?.parameters == "apt=96")
        #expect(m.ssrcGroups.first { $0.semantics == "FID" }?.ssrcs == [1234, 4321])
        let head = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=fingerprint:sha-256 AA:BB\r\n"
        let withRTX = head + "m=video 9 UDP/TLS/RTP/SAVPF 96 97\r\na=mid:0\r\na=rtpmap:96 VP8/90000\r\na=rtpmap:97 rtx/90000\r\na=fmtp:97 apt=96\r\n"
            + "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:1\r\na=rtpmap:111 opus/48000/2\r\n"
        let withoutRTX = head + "m=video 9 UDP/TLS/RTP/SAVPF 96\r\na=mid:0\r\na=rtpmap:96 VP8/90000\r\n"
        #expect(try SDPNegotiator.parseSubscribeAnswer(withRTX).retransmissionIndexes == [0])
        #expect(try SDPNegotiator.parseSubscribeAnswer(withoutRTX).retransmissionIndexes == [])
    }

    @Test("a captured Chromium simulcast offer is answered with its three rids received and one producer of three layers")
    func simulcast() throws {
        let plan = try SDPNegotiator.answer(offer: try mediaFixture("media/chromium-simulcast-offer.sdp"), transport: transport)
        let answer = try SessionDescription.parse(plan.answer)
        let video = answer.media[1]
        #expect(video.attributeValues("rid") == ["q recv", "h recv", "f recv"])
        #expect(video.attributeValue("simulcast") == "recv q;h;f")
        let uris = Set(video.extMaps.map(\.uri))
        #expect(uris.contains(RTPExtensionURI.rtpStreamID) && uris.contains(RTPExtensionURI.repairedRTPStreamID))
        #expect(uris.contains(RTPExtensionURI.mid))
        // Audio keeps no simulcast lines and no RID extensions.
        #expect(answer.media[0].attributeValue("simulcast") == nil)
        #expect(!answer.media[0].extMaps.contains { $0.uri == RTPExtensionURI.rtpStreamID })
        let producer = plan.producers[1]
        #expect(producer.simulcast == ["q", "h", "f"])
        #expect(producer.ssrc == nil && producer.rtxSSRC == nil && producer.rtxPayloadType != nil)
        #expect(producer.extensions.rid == 10 && producer.extensions.repairedRID == 11)
        #expect(plan.producers[0].simulcast.isEmpty)
    }
}
