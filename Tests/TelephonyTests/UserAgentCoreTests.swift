import Crypto
import Runtime
import Testing
import Wire
@testable import Telephony

/// The core as a pure engine: PRACK both ways, early media, re-INVITE answers, the registrar, trunks.
@Suite("User agent core")
struct UserAgentCoreTests {
    static let offer = PlainRTPNegotiator.offer(AudioSessionConfig(address: "127.0.0.1", port: 30_000), sessionID: 7, version: 1)
    static let local = PlainRTPNegotiator.offer(AudioSessionConfig(address: "127.0.0.1", port: 40_000), sessionID: 9, version: 1)
    static let phone = SIPPeer(host: "127.0.0.1", port: 5071)

    static func core(trunks: [TrunkConfig] = []) -> UserAgentCore {
        UserAgentCore(config: UserAgentConfig(host: "127.0.0.1", port: 5060, trunks: trunks, devices: ["127.0.0.1"]))
    }

    static func invite(extra: [(String, String)] = [], body: SessionDescription? = offer) -> SIPMessage {
        var m = Fixture.request(.invite, body: body.map { Array($0.serialize().utf8) } ?? [])
        m.headers.remove("Route")
        if body != nil { m.headers.add("Content-Type", "application/sdp") }
        for (n, v) in extra { m.headers.add(n, v) }
        return m
    }

    static func sent(_ outputs: [UserAgentOutput]) -> [SIPMessage] {
        outputs.compactMap { if case .send(let m, _) = $0 { m } else { nil } }
    }

    static func callID(_ outputs: [UserAgentOutput]) -> CallID? {
        outputs.lazy.compactMap { if case .event(.incomingCall(let id, _, _, _)) = $0 { id } else { nil } }.first
    }

    @Test("early media: a 183 with our SDP, reliable with RSeq when the caller supports 100rel, retransmitted until PRACK")
    func reliableEarlyMedia() throws {
        let core = Self.core()
        let inv = Self.invite(extra: [("Supported", "100rel")])
        let id = try #require(Self.callID(core.receive(inv.serialize(), from: Self.phone, now: Fixture.at(0))))
        let progress = Self.sent(core.progress(id, sdp: Self.local, now: Fixture.at(10)))
        let r183 = try #require(progress.first)
        #expect(r183.status == 183)
        #expect(r183.headers.tokens("Require").contains("100rel"))
        let rseq = try #require(r183.headers["RSeq"].flatMap { UInt32($0) })
        #expect(Self.sdp(r183)?.media.first?.port == 40_000)
        #expect(try r183.to().tag != nil && (try r183.contacts().first) != nil)
        // No PRACK yet: T1 later it goes again.
        let again = Self.sent(core.tick(now: Fixture.at(600)))
        #expect(again.map(\.status) == [183])
        // The PRACK stops the retransmissions and gets 200.
        var prack = Fixture.request(.prack, branch: "z9hG4bK-p", cseq: 2, toTag: try r183.to().tag)
        prack.headers.remove("Route")
        prack.headers.add("RAck", "\(rseq) 1 INVITE")
        let answered = Self.sent(core.receive(prack.serialize(), from: Self.phone, now: Fixture.at(700)))
        #expect(answered.map(\.status) == [200])
        #expect(Self.sent(core.tick(now: Fixture.at(5000))).allSatisfy { $0.status != 183 })
    }

    @Test("a PRACK for an RSeq we never sent is 481")
    func strayPrack() throws {
        let core = Self.core()
        let id = try #require(Self.callID(core.receive(Self.invite(extra: [("Supported", "100rel")]).serialize(), from: Self.phone, now: Fixture.at(0))))
        let r183 = try #require(Self.sent(core.progress(id, sdp: Self.local, now: Fixture.at(1))).first)
        var prack = Fixture.request(.prack, branch: "z9hG4bK-p", cseq: 2, toTag: try r183.to().tag)
        prack.headers.add("RAck", "999999999 1 INVITE")
        #expect(Self.sent(core.receive(prack.serialize(), from: Self.phone, now: Fixture.at(2))).map(\.status) == [481])
    }

    @Test("without 100rel the 183 is sent once, unreliably, and an INVITE requiring 100rel is accepted")
    func unreliableEarlyMedia() throws {
        let core = Self.core()
        let id = try #require(Self.callID(core.receive(Self.invite().serialize(), from: Self.phone, now: Fixture.at(0))))
        let r183 = try #require(Self.sent(core.progress(id, sdp: Self.local, now: Fixture.at(1))).first)
        #expect(r183.headers["RSeq"] == nil)
        #expect(Self.sent(core.tick(now: Fixture.at(2000))).allSatisfy { $0.status != 183 })
        let core2 = Self.core()
        let out = core2.receive(Self.invite(extra: [("Require", "100rel")]).serialize(), from: Self.phone, now: Fixture.at(0))
        #expect(Self.callID(out) != nil)
        #expect(!Self.sent(out).contains { $0.status == 420 })
    }

    @Test("an ACK that reuses the INVITE's branch (as SIPp's scenarios do) still reaches the call: connected, the 200 no longer resent",
          arguments: ["z9hG4bK-1", "z9hG4bK-a"])
    func ackOfTheInvitesBranch(branch: String) throws {
        let core = Self.core()
        let id = try #require(Self.callID(core.receive(Self.invite().serialize(), from: Self.phone, now: Fixture.at(0))))
        let ok = try #require(Self.sent(core.answer(id, sdp: Self.local, now: Fixture.at(1))).first { $0.status == 200 })
        var ack = Fixture.request(.ack, branch: branch, cseq: 1, toTag: try ok.to().tag)
        ack.headers.remove("Route")
        let out = core.receive(ack.serialize(), from: Self.phone, now: Fixture.at(2))
        #expect(out.contains { if case .event(.connected(id, _)) = $0 { true } else { false } })
        #expect(Self.sent(core.tick(now: Fixture.at(5_000))).isEmpty, "no 200 again")
        #expect(Self.sent(core.hangup(id, now: Fixture.at(6_000))).compactMap(\.method) == [.bye])
    }

    @Test("hung up after our 200 and before its ACK: ended at once, the BYE waits for the ACK — or for the ACK's time-out")
    func hangupBeforeAck() throws {
        for acknowledged in [true, false] {
            let core = Self.core()
            let id = try #require(Self.callID(core.receive(Self.invite().serialize(), from: Self.phone, now: Fixture.at(0))))
            let ok = try #require(Self.sent(core.answer(id, sdp: Self.local, now: Fixture.at(1))).first { $0.status == 200 })
            let out = core.hangup(id, now: Fixture.at(2))
            #expect(Self.sent(out).isEmpty, "no BYE before the ACK (RFC 3261 §15)")
            #expect(out.contains { if case .event(.ended(id, nil, _)) = $0 { true } else { false } })
            #expect(core.hangup(id, now: Fixture.at(3)).isEmpty, "hung up once")
            let later: [UserAgentOutput]
            if acknowledged {
                var ack = Fixture.request(.ack, branch: "z9hG4bK-a", cseq: 1, toTag: try ok.to().tag)
                ack.headers.remove("Route")
                later = core.receive(ack.serialize(), from: Self.phone, now: Fixture.at(4))
            } else {
                // No ACK: the 200 goes again until 64*T1 (32 s), then the BYE.
                var all: [UserAgentOutput] = []
                for ms in stride(from: UInt64(500), through: 31_500, by: 500) { all += core.tick(now: Fixture.at(ms)) }
                #expect(Self.sent(all).allSatisfy { $0.status == 200 } && !Self.sent(all).isEmpty, "the 200 again, no BYE yet")
                later = core.tick(now: Fixture.at(32_500))
            }
            #expect(Self.sent(later).compactMap(\.method) == [.bye])
            #expect(!later.contains { if case .event = $0 { true } else { false } }, "no second end, no connected call")
        }
    }

    @Test("a hold offered in a re-INVITE or an UPDATE (RFC 3311) is answered with our SDP, recvonly, version bumped; the call updated",
          arguments: [SIPMethod.invite, .update])
    func reofferAnswer(method: SIPMethod) throws {
        let core = Self.core()
        let (id, tag) = try Self.answeredCall(core)
        var hold = Self.offer
        hold.media[0].direction = .sendonly
        let re = Self.inDialog(method, tag: tag, cseq: 2, type: "application/sdp", body: hold.serialize())
        let out = core.receive(re.serialize(), from: Self.phone, now: Fixture.at(3))
        let reOK = try #require(Self.sent(out).first { $0.status == 200 })
        let answer = try #require(Self.sdp(reOK))
        #expect(answer.media.first?.direction == .recvonly && reOK.contentType == "application/sdp")
        #expect(answer.media.first?.port == 40_000)
        #expect((answer.origin?.sessionVersion ?? 0) > (Self.local.origin?.sessionVersion ?? 0))
        #expect(out.contains { if case .event(.updated(id, _)) = $0 { true } else { false } })
    }

    /// An answered inbound call: its id and our tag.
    static func answeredCall(_ core: UserAgentCore) throws -> (CallID, String) {
        let id = try #require(Self.callID(core.receive(Self.invite().serialize(), from: Self.phone, now: Fixture.at(0))))
        let ok = try #require(Self.sent(core.answer(id, sdp: Self.local, now: Fixture.at(1))).first { $0.status == 200 })
        let tag = try #require(try ok.to().tag)
        var ack = Fixture.request(.ack, branch: "z9hG4bK-a", cseq: 1, toTag: tag)
        ack.headers.remove("Route")
        _ = core.receive(ack.serialize(), from: Self.phone, now: Fixture.at(2))
        return (id, tag)
    }

    /// An in-dialog request from the phone with `body` of `type`.
    static func inDialog(_ method: SIPMethod, tag: String, cseq: Int, type: String? = nil, body: String = "") -> SIPMessage {
        var m = Fixture.request(method, branch: "z9hG4bK-\(method.rawValue.lowercased())\(cseq)", cseq: UInt32(cseq), toTag: tag, body: Array(body.utf8))
        m.headers.remove("Route")
        if let type { m.headers.add("Content-Type", type) }
        return m
    }

    @Test("keys in SIP INFO (dtmf-relay, dtmf) are reported as the call's digits; a DTMF body without a key is 400; other INFO is 200")
    func infoDigits() throws {
        let core = Self.core()
        let (id, tag) = try Self.answeredCall(core)
        var cseq = 2
        func info(_ type: String?, _ body: String) -> (Int?, [Character]) {
            cseq += 1
            let out = core.receive(Self.inDialog(.info, tag: tag, cseq: cseq, type: type, body: body).serialize(), from: Self.phone, now: Fixture.at(3))
            let keys = out.compactMap { if case .event(.digit(id, let k)) = $0 { k } else { nil } }
            return (Self.sent(out).first { $0.status != nil }?.status, keys)
        }
        #expect(info("application/dtmf-relay", "Signal=5\r\nDuration=160\r\n") == (200, ["5"]))
        #expect(info("application/dtmf-relay", "Signal= 11\r\nDuration=100\r\n") == (200, ["#"]))
        #expect(info("Application/DTMF", "*\r\n") == (200, ["*"]))
        #expect(info("application/dtmf-relay", "Duration=160\r\n") == (400, []))
        #expect(info("application/dtmf", "55") == (400, []))
        #expect(info("application/media_control+xml", "<media_control/>") == (200, []))
        #expect(info(nil, "") == (200, []))
    }

    @Test("a key sent in SIP INFO: dtmf-relay in the call's dialog, its CSeq next; nothing for a call not up or a key DTMF has not")
    func sendsInfoKey() throws {
        let unanswered = Self.core()
        let ringing = try #require(Self.callID(unanswered.receive(Self.invite().serialize(), from: Self.phone, now: Fixture.at(0))))
        #expect(unanswered.sendKey(ringing, "5", now: Fixture.at(1)).isEmpty)
        let core = Self.core()
        let (id, tag) = try Self.answeredCall(core)
        let info = try #require(Self.sent(core.sendKey(id, "#", now: Fixture.at(3))).first)
        #expect(info.method == .info && info.contentType == "application/dtmf-relay")
        #expect(String(decoding: info.body, as: UTF8.self) == "Signal=#\r\nDuration=100\r\n")
        #expect(try info.from().tag == tag && info.callID == id.rawValue)
        #expect(core.sendKey(id, "x", now: Fixture.at(4)).isEmpty)
    }

    @Test("an UPDATE without an offer (a session refresh) gets a plain 200 and changes nothing")
    func updateRefresh() throws {
        let core = Self.core()
        let (_, tag) = try Self.answeredCall(core)
        let refresh = core.receive(Self.inDialog(.update, tag: tag, cseq: 2).serialize(), from: Self.phone, now: Fixture.at(4))
        let plain = try #require(Self.sent(refresh).first { $0.status == 200 })
        #expect(plain.body.isEmpty && !refresh.contains { if case .event(.updated) = $0 { true } else { false } })
    }

    @Test("as caller, our DTLS-SRTP offer's actpass is settled by the answer (active → passive, passive → active), so a re-INVITE is answered with the call's role")
    func settlesSetup() throws {
        var config = AudioSessionConfig(address: "127.0.0.1", port: 40_000)
        config.encryption = .dtlsSrtp
        let offer = PlainRTPNegotiator.offer(config, sessionID: 9, version: 1)
        #expect(offer.media[0].setup == .actpass)
        for (theirs, ours) in [(SDPSetupRole.active, SDPSetupRole.passive), (.passive, .active)] {
            var answer = Self.offer
            answer.setup = theirs  // at the session level, as baresip writes it
            let settled = UserAgentCore.settled(offer, by: answer)
            #expect(settled.media[0].setup == ours && settled.media[0].fingerprint == offer.media[0].fingerprint)
        }
        // A plain offer, or an answer that settles nothing, is left as it was.
        #expect(UserAgentCore.settled(Self.local, by: Self.offer) == Self.local)
        #expect(UserAgentCore.settled(offer, by: Self.offer) == offer)
    }

    @Test("a re-INVITE that no longer offers our codec is answered with the first it offers that we speak, at its payload types; one that still offers it keeps it")
    func reinviteCodec() throws {
        // Ours: PCMU and telephone-event, SDES keyed on tag 2.
        var ours = Self.local
        PlainRTPNegotiator.setCodecs([(.pcmu, 0), (.telephoneEvent, 101)], of: &ours.media[0])
        ours.media[0].addAttribute("crypto", SDPCrypto(tag: 2, suite: "AES_CM_128_HMAC_SHA1_80", keySalt: Array(repeating: 1, count: 30)).attributeValue)
        var offer = Self.offer
        PlainRTPNegotiator.setCodecs([(.opus, 96), (.pcma, 8), (.telephoneEvent, 100)], of: &offer.media[0])
        offer.media[0].addAttribute("crypto", SDPCrypto(tag: 5, suite: "AES_CM_128_HMAC_SHA1_80", keySalt: Array(repeating: 2, count: 30)).attributeValue)
        let moved = UserAgentCore.reanswer(ours, to: offer, version: 2)
        #expect(moved.media[0].formats == ["96", "100"] && moved.media[0].rtpMap(payloadType: 96)?.encodingName.lowercased() == "opus")
        #expect(moved.media[0].attributeValues("fmtp") == ["100 0-16"])
        #expect(moved.media[0].attributeValues("crypto").compactMap(SDPCrypto.init(attributeValue:)).map(\.tag) == [5])
        #expect(try SessionDescription.parse(moved.serialize()) == moved)
        PlainRTPNegotiator.setCodecs([(.pcma, 8), (.pcmu, 0)], of: &offer.media[0])
        #expect(UserAgentCore.reanswer(ours, to: offer, version: 3).media[0].formats == ["0"])
    }

    @Test("as caller, our offer settled by the answer: the codecs and SDES line it kept")
    func settlesCodecs() throws {
        var config = AudioSessionConfig(address: "127.0.0.1", port: 40_000)
        config.encryption = .srtp
        let offer = PlainRTPNegotiator.offer(config, sessionID: 9, version: 1)
        #expect(offer.media[0].formats.count == 4 && offer.media[0].attributeValues("crypto").count == 2)
        var answer = Self.offer
        PlainRTPNegotiator.setCodecs([(.pcma, 8), (.telephoneEvent, 101)], of: &answer.media[0])
        answer.media[0].addAttribute("crypto", SDPCrypto(tag: 2, suite: "AEAD_AES_128_GCM", keySalt: Array(repeating: 3, count: 28)).attributeValue)
        let settled = UserAgentCore.settled(offer, by: answer)
        #expect(PlainRTPNegotiator.codecs(of: settled.media[0]).map(\.0) == [.pcma, .telephoneEvent])
        #expect(settled.media[0].attributeValues("crypto").compactMap(SDPCrypto.init(attributeValue:)).map(\.tag) == [2])
    }

    @Test("as caller, a reliable 183 is PRACKed once with RAck in the early dialog; its retransmission is not")
    func sendsPrack() throws {
        let trunk = TrunkConfig(name: "t", host: "127.0.0.1", port: 5080, healthInterval: 0)
        let core = Self.core(trunks: [trunk])
        let (id, out) = core.invite(to: SIPURI(user: "15550100", host: "127.0.0.1"), from: SIPAddress(uri: SIPURI(user: "me", host: "127.0.0.1")),
                                    sdp: Self.local, trunk: trunk, now: Fixture.at(0))
        let inv = try #require(Self.sent(out).first)
        #expect(inv.headers.tokens("Supported").contains("100rel"))
        var r183 = Fixture.response(183, to: inv, toTag: "uas1")
        r183.headers.add("Require", "100rel")
        r183.headers.add("RSeq", "42")
        let first = Self.sent(core.receive(r183.serialize(), from: trunk.peer, now: Fixture.at(10)))
        let prack = try #require(first.first { $0.method == .prack })
        #expect(prack.headers["RAck"] == "42 1 INVITE")
        #expect(try prack.cseq().sequence == 2)
        #expect(try prack.to().tag == "uas1")
        #expect(prack.requestURI?.user == "bob")  // the 183's Contact
        let repeatPrack = Self.sent(core.receive(r183.serialize(), from: trunk.peer, now: Fixture.at(20)))
        #expect(!repeatPrack.contains { $0.method == .prack })
        let ok = Fixture.response(200, to: inv, toTag: "uas1")
        let after = core.receive(ok.serialize(), from: trunk.peer, now: Fixture.at(30))
        #expect(Self.sent(after).contains { $0.method == .ack })
        #expect(after.contains { if case .event(.connected(id, _)) = $0 { true } else { false } })
    }

    @Test("a TCP peer gets a TCP Via and no retransmissions")
    func tcpVia() throws {
        let trunk = TrunkConfig(name: "t", host: "127.0.0.1", port: 5080, transport: .tcp, healthInterval: 0)
        let core = Self.core(trunks: [trunk])
        let (_, out) = core.invite(to: SIPURI(user: "1", host: "127.0.0.1"), from: SIPAddress(uri: SIPURI(user: "me", host: "127.0.0.1")),
                                   sdp: Self.local, trunk: trunk, now: Fixture.at(0))
        let inv = try #require(Self.sent(out).first)
        #expect(try inv.topVia().transport == "TCP")
        #expect(inv.headers["Contact"]?.contains("transport=tcp") == true)
        #expect(Self.sent(core.tick(now: Fixture.at(1000))).isEmpty)
    }

    @Test("unanswered INVITEs per source are capped (503), answered ones no longer count; a trunk's cap is larger")
    func pendingCap() throws {
        let trunk = TrunkConfig(name: "carrier", host: "127.0.0.9", healthInterval: 0)
        let core = UserAgentCore(config: UserAgentConfig(host: "127.0.0.1", port: 5060, trunks: [trunk], devices: ["127.0.0.1"],
                                                         maxPendingPerSource: 4, maxPendingPerTrunk: 8))
        func invite(_ n: Int, from host: String) -> [UserAgentOutput] {
            var m = Self.invite()
            m.headers.set("Via", "SIP/2.0/UDP \(host):5071;branch=z9hG4bK-cap\(n)")
            m.headers.set("Call-ID", "cap-\(n)@\(host)")
            return core.receive(m.serialize(), from: SIPPeer(host: host, port: 5071), now: Fixture.at(UInt64(n)))
        }
        var ids: [CallID] = []
        for n in 0..<4 { ids.append(try #require(Self.callID(invite(n, from: "127.0.0.1")))) }
        #expect(Self.sent(invite(4, from: "127.0.0.1")).map(\.status) == [503])
        _ = core.answer(ids[0], sdp: Self.local, now: Fixture.at(10))
        #expect(Self.callID(invite(5, from: "127.0.0.1")) != nil)
        // The trunk's source may have 8 setting up.
        for n in 100..<108 { #expect(Self.callID(invite(n, from: "127.0.0.9")) != nil) }
        #expect(Self.sent(invite(108, from: "127.0.0.9")).map(\.status) == [503])
    }

    static func sdp(_ m: SIPMessage) -> SessionDescription? { try? SessionDescription.parse(m.body) }
}
