import Runtime
import Testing
import Wire
@testable import Telephony

/// Overload shedding in the core: new INVITEs past the call limit or the unanswered-INVITE limit get 503
/// with Retry-After; in-dialog requests, OPTIONS and BYE are still served.
@Suite("Overload shedding")
struct OverloadSheddingTests {
    static let phone = SIPPeer(host: "127.0.0.1", port: 5071)

    static func core(maxCalls: Int = 0, maxPendingInvites: Int = 1000) -> UserAgentCore {
        UserAgentCore(config: UserAgentConfig(host: "127.0.0.1", port: 5060, devices: ["127.0.0.1"], maxCalls: maxCalls,
                                              maxPendingInvites: maxPendingInvites, retryAfterSeconds: 7))
    }

    static func request(_ method: SIPMethod, call: Int, branch: String, cseq: UInt32 = 1, toTag: String? = nil) -> SIPMessage {
        var m = Fixture.request(method, branch: branch, cseq: cseq, toTag: toTag)
        m.headers.remove("Route")
        m.headers.remove("Call-ID")
        m.headers.add("Call-ID", "call-\(call)@127.0.0.1")
        return m
    }

    static func sent(_ outputs: [UserAgentOutput]) -> [SIPMessage] {
        outputs.compactMap { if case .send(let m, _) = $0 { m } else { nil } }
    }

    static func incoming(_ outputs: [UserAgentOutput]) -> CallID? {
        outputs.lazy.compactMap { if case .event(.incomingCall(let id, _, _, _)) = $0 { id } else { nil } }.first
    }

    @Test("past the call limit a new INVITE is 503 with Retry-After, its retransmission too; OPTIONS, re-INVITE and BYE still served")
    func callLimit() throws {
        let core = Self.core(maxCalls: 1)
        let first = core.receive(Self.request(.invite, call: 1, branch: "z9hG4bK-a").serialize(), from: Self.phone, now: Fixture.at(0))
        let id = try #require(Self.incoming(first))
        let ok = Self.sent(core.answer(id, sdp: UserAgentCoreTests.local, now: Fixture.at(1))).first { $0.status == 200 }
        let tag = try #require(try ok?.to().tag)

        let second = Self.request(.invite, call: 2, branch: "z9hG4bK-b")
        let refused = core.receive(second.serialize(), from: Self.phone, now: Fixture.at(2))
        #expect(Self.incoming(refused) == nil)
        let r503 = try #require(Self.sent(refused).first)
        #expect(r503.status == 503)
        #expect(r503.headers["Retry-After"] == "7")
        #expect(try r503.to().tag != nil)
        #expect(core.statistics.shed[.calls] == 1)
        // The caller retransmits before seeing it: the transaction sends the same 503, no second shed.
        let again = Self.sent(core.receive(second.serialize(), from: Self.phone, now: Fixture.at(400)))
        #expect(again.map(\.status) == [503])
        #expect(core.statistics.shed[.calls] == 1)
        #expect(core.activeCalls == 1)

        let options = Self.sent(core.receive(Self.request(.options, call: 3, branch: "z9hG4bK-c").serialize(), from: Self.phone, now: Fixture.at(5)))
        #expect(options.map(\.status) == [200])
        // A re-INVITE inside the call that is up is not a new call.
        let reinvite = Self.sent(core.receive(Self.request(.invite, call: 1, branch: "z9hG4bK-d", cseq: 2, toTag: tag).serialize(),
                                              from: Self.phone, now: Fixture.at(6)))
        #expect(reinvite.contains { $0.status == 200 })
        let bye = Self.sent(core.receive(Self.request(.bye, call: 1, branch: "z9hG4bK-e", cseq: 3, toTag: tag).serialize(),
                                         from: Self.phone, now: Fixture.at(7)))
        #expect(bye.map(\.status) == [200])
        // The call is gone: the next new INVITE is offered.
        #expect(Self.incoming(core.receive(Self.request(.invite, call: 4, branch: "z9hG4bK-f").serialize(), from: Self.phone, now: Fixture.at(8))) != nil)
    }

    @Test("while too many INVITEs are unanswered, new ones are shed; once answered, new ones are offered again")
    func pendingLimit() throws {
        let core = Self.core(maxPendingInvites: 2)
        var ids: [CallID] = []
        for call in 1...2 {
            ids.append(try #require(Self.incoming(core.receive(Self.request(.invite, call: call, branch: "z9hG4bK-\(call)").serialize(),
                                                               from: Self.phone, now: Fixture.at(0)))))
        }
        let third = Self.sent(core.receive(Self.request(.invite, call: 3, branch: "z9hG4bK-3").serialize(), from: Self.phone, now: Fixture.at(1)))
        #expect(third.map(\.status) == [503])
        #expect(core.statistics.shed[.pending] == 1)
        _ = core.reject(ids[0], status: 486, now: Fixture.at(2))
        #expect(Self.incoming(core.receive(Self.request(.invite, call: 4, branch: "z9hG4bK-4").serialize(), from: Self.phone, now: Fixture.at(3))) != nil)
    }
}
