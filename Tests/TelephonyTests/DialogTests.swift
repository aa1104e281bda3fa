import Testing
import Wire
@testable import Telephony

@Suite("Dialogs (RFC 3261 §12)")
struct DialogTests {
    func rrResponse(_ invite: SIPMessage) -> SIPMessage {
        var ok = Fixture.response(200, to: invite)
        ok.headers.add("Record-Route", "<sip:p1.example.com;lr>, <sip:p2.example.com;lr>")
        return ok
    }

    @Test("UAC: route set reversed, CSeq increments, loose routing keeps the target as Request-URI")
    func uac() throws {
        let invite = Fixture.request(.invite)
        var d = try Dialog.uac(request: invite, response: rrResponse(invite))
        #expect(d.id == DialogID(callID: "call-1@127.0.0.1", localTag: "a1", remoteTag: "b1"))
        #expect(d.state == .confirmed && d.routeSet.map(\.uri.host) == ["p2.example.com", "p1.example.com"])
        let bye = d.makeRequest(.bye)
        #expect(bye.requestURI == SIPURI(user: "bob", host: "127.0.0.1", port: 5080))
        #expect(try bye.cseq() == SIPCSeq(2, .bye))
        #expect(try bye.routes().map(\.uri.host) == ["p2.example.com", "p1.example.com"])
        #expect(try bye.to().tag == "b1" && (try bye.from().tag) == "a1")
        #expect(try d.ack(sequence: 1).cseq() == SIPCSeq(1, .ack))
    }

    @Test("UAS: route set in order, remote CSeq enforced, re-INVITE refreshes the target, BYE ends it")
    func uas() throws {
        var invite = Fixture.request(.invite, cseq: 5)
        invite.headers.add("Record-Route", "<sip:p1.example.com;lr>")
        var d = try Dialog.uas(request: invite, localTag: "b1", confirmed: true)
        #expect(d.routeSet.map(\.uri.host) == ["p1.example.com"] && d.remoteSequence == 5)
        var reinvite = Fixture.request(.invite, branch: "z9hG4bK-2", cseq: 6, toTag: "b1")
        reinvite.headers.set("Contact", "<sip:alice@127.0.0.9:5999>")
        try d.receive(reinvite)
        #expect(d.remoteTarget.host == "127.0.0.9" && d.remoteSequence == 6)
        #expect(throws: DialogError.sequenceOutOfOrder(received: 6, last: 6)) { try d.receive(reinvite) }
        try d.receive(Fixture.request(.bye, branch: "z9hG4bK-3", cseq: 7, toTag: "b1"))
        #expect(d.state == .terminated)
        #expect(Dialog.id(of: reinvite, asUAS: true) == d.id)
    }

    @Test("strict routing: a route without lr becomes the Request-URI and the target goes last")
    func strict() throws {
        let invite = Fixture.request(.invite)
        var ok = Fixture.response(200, to: invite)
        ok.headers.add("Record-Route", "<sip:strict.example.com>")
        var d = try Dialog.uac(request: invite, response: ok)
        let bye = d.makeRequest(.bye)
        #expect(bye.requestURI?.host == "strict.example.com")
        #expect(try bye.routes().last?.uri.host == "127.0.0.1")
    }

    @Test("a response without a To tag cannot make a dialog")
    func missingTag() {
        let invite = Fixture.request(.invite)
        #expect(throws: DialogError.missingTag) { try Dialog.uac(request: invite, response: Fixture.response(180, to: invite, toTag: nil)) }
    }
}
