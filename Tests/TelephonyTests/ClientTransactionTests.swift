import Runtime
import Testing
import Wire
@testable import Telephony

@Suite("Client transactions (RFC 3261 §17.1)")
struct ClientTransactionTests {
    /// Drives the clock in 1 ms steps up to `end` and records when the request went out again.
    func retransmissions(_ t: inout ClientTransaction, until end: UInt64) -> [UInt64] {
        var times: [UInt64] = []
        var ms: UInt64 = 0
        while ms <= end {
            if let next = t.nextDeadline, next <= Fixture.at(ms) {
                let actions = t.tick(now: Fixture.at(ms))
                if actions.sentCount > 0 { times.append(ms) }
                if actions.contains(.terminated) { break }
            }
            ms += 1
        }
        return times
    }

    @Test("INVITE over UDP: timer A doubles from T1, timer B ends it at 64·T1 with a timeout")
    func inviteTimers() throws {
        var t = try ClientTransaction(request: Fixture.request(.invite), reliable: false)
        #expect(t.start(now: Fixture.at(0)).sentCount == 1)
        let times = retransmissions(&t, until: 31_999)
        #expect(times == [500, 1500, 3500, 7500, 15500, 31500])
        let end = t.tick(now: Fixture.at(32_000))
        #expect(end == [.timeout, .terminated] && t.state == .terminated)
    }

    @Test("INVITE over TCP: no retransmission, still timer B")
    func inviteReliable() throws {
        var t = try ClientTransaction(request: Fixture.request(.invite), reliable: true)
        _ = t.start(now: Fixture.at(0))
        #expect(!t.isArmed(.a) && t.isArmed(.b))
        #expect(t.tick(now: Fixture.at(31_999)).isEmpty)
        #expect(t.tick(now: Fixture.at(32_000)) == [.timeout, .terminated])
    }

    @Test("a provisional response stops timer A; a 486 is acknowledged by the transaction")
    func nonSuccessAck() throws {
        let invite = Fixture.request(.invite)
        var t = try ClientTransaction(request: invite, reliable: false)
        _ = t.start(now: Fixture.at(0))
        let ringing = Fixture.response(180, to: invite)
        #expect(t.receive(ringing, now: Fixture.at(100)) == [.deliver(ringing)])
        #expect(!t.isArmed(.a) && t.state == .proceeding)
        let busy = Fixture.response(486, to: invite)
        let actions = t.receive(busy, now: Fixture.at(200))
        let ack = try #require(actions.sent.first)
        #expect(try ack.method == .ack && (try ack.cseq()) == SIPCSeq(1, .ack))
        #expect(try ack.requestURI == invite.requestURI && (try ack.to().tag) == "b1")
        #expect(try ack.topVia().branch == "z9hG4bK-1" && ack.headers.values("Via").count == 1)
        #expect(ack.headers["Route"] == "<sip:proxy.example.com;lr>")
        #expect(actions.contains(.deliver(busy)) && t.state == .completed)
        // A retransmitted 486 gets the same ACK again, and nothing goes up.
        #expect(t.receive(busy, now: Fixture.at(300)) == [.send(ack)])
        // Timer D (32 s on UDP) ends the transaction.
        #expect(t.tick(now: Fixture.at(200 + 31_999)).isEmpty)
        #expect(t.tick(now: Fixture.at(200 + 32_000)) == [.terminated])
    }

    @Test("a 2xx goes up, and so do its retransmissions until timer M")
    func accepted() throws {
        let invite = Fixture.request(.invite)
        var t = try ClientTransaction(request: invite, reliable: false)
        _ = t.start(now: Fixture.at(0))
        let ok = Fixture.response(200, to: invite)
        #expect(t.receive(ok, now: Fixture.at(10)) == [.deliver(ok)])
        #expect(t.state == .accepted && t.ack == nil)
        #expect(t.receive(ok, now: Fixture.at(600)) == [.deliver(ok)])
        #expect(t.tick(now: Fixture.at(10 + 32_000)) == [.terminated])
    }

    @Test("non-INVITE over UDP: timer E doubles to T2, then stays at T2 while proceeding; F times out")
    func nonInviteTimers() throws {
        let options = Fixture.request(.options)
        var t = try ClientTransaction(request: options, reliable: false)
        _ = t.start(now: Fixture.at(0))
        let times = retransmissions(&t, until: 20_000)
        #expect(times == [500, 1500, 3500, 7500, 11500, 15500, 19500])
        var p = try ClientTransaction(request: options, reliable: false)
        _ = p.start(now: Fixture.at(0))
        _ = p.receive(Fixture.response(100, to: options), now: Fixture.at(100))
        #expect(retransmissions(&p, until: 9_000) == [500, 4500, 8500])
        #expect(p.tick(now: Fixture.at(32_000)).contains(.timeout))
    }

    @Test("non-INVITE final response: delivered once, retransmissions absorbed, timer K = T4")
    func nonInviteCompleted() throws {
        let bye = Fixture.request(.bye)
        var t = try ClientTransaction(request: bye, reliable: false)
        _ = t.start(now: Fixture.at(0))
        let ok = Fixture.response(200, to: bye)
        #expect(t.receive(ok, now: Fixture.at(50)) == [.deliver(ok)])
        #expect(t.receive(ok, now: Fixture.at(60)).isEmpty)
        #expect(t.tick(now: Fixture.at(5_049)).isEmpty)
        #expect(t.tick(now: Fixture.at(5_050)) == [.terminated])
    }

    @Test("responses match by top Via branch and CSeq method")
    func matching() throws {
        let invite = Fixture.request(.invite, branch: "z9hG4bK-match")
        let t = try ClientTransaction(request: invite, reliable: false)
        #expect(try TransactionKey.client(for: Fixture.response(200, to: invite)) == t.key)
        let cancel = Fixture.request(.cancel, branch: "z9hG4bK-match")
        #expect(try TransactionKey.client(for: Fixture.response(200, to: cancel)) != t.key)
    }
}
