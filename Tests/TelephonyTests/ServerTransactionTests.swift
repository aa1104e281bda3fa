import Runtime
import Testing
import Wire
@testable import Telephony

@Suite("Server transactions (RFC 3261 §17.2)")
struct ServerTransactionTests {
    @Test("INVITE: retransmissions get the last provisional; a 486 is resent on timer G until the ACK")
    func inviteNonSuccess() throws {
        let invite = Fixture.request(.invite)
        var t = try ServerTransaction(request: invite, reliable: false)
        #expect(t.start() == [.deliver(invite)])
        #expect(t.receive(invite, now: Fixture.at(10)).isEmpty)
        let trying = Fixture.response(100, to: invite, toTag: nil)
        #expect(t.respond(trying, now: Fixture.at(20)) == [.send(trying)])
        #expect(t.receive(invite, now: Fixture.at(30)) == [.send(trying)])
        let busy = Fixture.response(486, to: invite)
        #expect(t.respond(busy, now: Fixture.at(100)) == [.send(busy)])
        var resent: [UInt64] = []
        for ms in stride(from: UInt64(100), through: 8_000, by: 1) where t.nextDeadline.map({ $0 <= Fixture.at(ms) }) ?? false {
            if t.tick(now: Fixture.at(ms)).sentCount > 0 { resent.append(ms - 100) }
        }
        #expect(resent == [500, 1500, 3500, 7500])
        let ack = ClientTransaction.ack(for: invite, response: busy)
        #expect(try TransactionKey.server(for: ack) == t.key)
        #expect(t.receive(ack, now: Fixture.at(8_000)).isEmpty && t.state == .confirmed)
        #expect(t.tick(now: Fixture.at(12_999)).isEmpty)
        #expect(t.tick(now: Fixture.at(13_000)) == [.terminated])
    }

    @Test("INVITE: no ACK for a final response within timer H is a timeout")
    func timerH() throws {
        let invite = Fixture.request(.invite)
        var t = try ServerTransaction(request: invite, reliable: true)
        _ = t.respond(Fixture.response(603, to: invite), now: Fixture.at(0))
        #expect(!t.isArmed(.g))
        #expect(t.tick(now: Fixture.at(32_000)) == [.timeout, .terminated])
    }

    @Test("INVITE 2xx: retransmitted with doubling up to T2 until the ACK; timer L ends it")
    func inviteSuccess() throws {
        let invite = Fixture.request(.invite)
        var t = try ServerTransaction(request: invite, reliable: false)
        let ok = Fixture.response(200, to: invite)
        _ = t.respond(ok, now: Fixture.at(0))
        var resent: [UInt64] = []
        for ms in stride(from: UInt64(0), through: 12_000, by: 1) where t.nextDeadline.map({ $0 <= Fixture.at(ms) }) ?? false {
            if t.tick(now: Fixture.at(ms)).sentCount > 0 { resent.append(ms) }
        }
        #expect(resent == [500, 1500, 3500, 7500, 11500])
        #expect(t.receive(invite, now: Fixture.at(12_000)) == [.send(ok)])
        t.acknowledge2xx()
        #expect(!t.isArmed(.okRetransmit))
        #expect(t.tick(now: Fixture.at(32_000)) == [.terminated])
    }

    @Test("INVITE 2xx never acknowledged: timer L reports a timeout so the call can be hung up")
    func noAckFor2xx() throws {
        let invite = Fixture.request(.invite)
        var t = try ServerTransaction(request: invite, reliable: true)
        _ = t.respond(Fixture.response(200, to: invite), now: Fixture.at(0))
        #expect(t.tick(now: Fixture.at(32_000)) == [.timeout, .terminated])
    }

    @Test("non-INVITE: absorbs retransmissions before the answer, resends it after; timer J")
    func nonInvite() throws {
        let options = Fixture.request(.options)
        var t = try ServerTransaction(request: options, reliable: false)
        #expect(t.receive(options, now: Fixture.at(1)).isEmpty)
        let ok = Fixture.response(200, to: options)
        #expect(t.respond(ok, now: Fixture.at(10)) == [.send(ok)])
        #expect(t.receive(options, now: Fixture.at(20)) == [.send(ok)])
        #expect(t.tick(now: Fixture.at(32_009)).isEmpty)
        #expect(t.tick(now: Fixture.at(32_010)) == [.terminated])
        var tcp = try ServerTransaction(request: options, reliable: true)
        #expect(tcp.respond(ok, now: Fixture.at(0)) == [.send(ok), .terminated])
    }

    @Test("matching: magic-cookie branch + sent-by + method; CANCEL is its own transaction; RFC 2543 fallback")
    func matching() throws {
        let invite = Fixture.request(.invite, branch: "z9hG4bK-abc")
        let key = try TransactionKey.server(for: invite)
        #expect(try TransactionKey.server(for: Fixture.request(.invite, branch: "z9hG4bK-abc")) == key)
        #expect(try TransactionKey.server(for: Fixture.request(.cancel, branch: "z9hG4bK-abc")) != key)
        #expect(try TransactionKey.server(for: Fixture.request(.invite, branch: "z9hG4bK-other")) != key)
        let old = Fixture.request(.invite, branch: "1")
        let oldKey = try TransactionKey.server(for: old)
        guard case .rfc2543 = oldKey else { Issue.record("expected the RFC 2543 key"); return }
        let oldAck = ClientTransaction.ack(for: old, response: Fixture.response(404, to: old))
        #expect(try TransactionKey.server(for: oldAck) == oldKey)
    }
}
