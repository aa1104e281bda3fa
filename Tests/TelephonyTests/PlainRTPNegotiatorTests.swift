import Testing
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
        #expect(throws: PlainRTPError.unsupportedProfile("RTP/SAVP")) {
            try PlainRTPNegotiator.answer(srtp, local: AudioSessionConfig(address: "127.0.0.1", port: 1), sessionID: 1, version: 1)
        }
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
