import Runtime
import Wire
@testable import Telephony

/// Builders shared by the Telephony tests.
enum Fixture {
    static func request(_ method: SIPMethod, branch: String = "z9hG4bK-1", cseq: UInt32 = 1, toTag: String? = nil,
                        body: [UInt8] = []) -> SIPMessage {
        var h = SIPHeaders()
        h.add("Via", "SIP/2.0/UDP 127.0.0.1:5071;branch=\(branch)")
        h.add("Max-Forwards", "70")
        h.add("From", "<sip:alice@127.0.0.1>;tag=a1")
        h.add("To", "<sip:bob@127.0.0.1>" + (toTag.map { ";tag=\($0)" } ?? ""))
        h.add("Call-ID", "call-1@127.0.0.1")
        h.add("CSeq", "\(cseq) \(method)")
        h.add("Contact", "<sip:alice@127.0.0.1:5071>")
        h.add("Route", "<sip:proxy.example.com;lr>")
        return .request(method, SIPURI(user: "bob", host: "127.0.0.1"), headers: h, body: body)
    }

    static func response(_ status: Int, to request: SIPMessage, toTag: String? = "b1") -> SIPMessage {
        var h = SIPHeaders()
        for v in request.headers.values("Via") { h.add("Via", v) }
        h.add("From", request.headers["From"]!)
        h.add("To", request.headers["To"]! + (toTag.map { ";tag=\($0)" } ?? ""))
        h.add("Call-ID", request.callID!)
        h.add("CSeq", request.headers["CSeq"]!)
        h.add("Contact", "<sip:bob@127.0.0.1:5080>")
        return .response(status, headers: h)
    }

    static func at(_ ms: UInt64) -> Instant { Instant(nanoseconds: ms * 1_000_000) }
}

extension Array where Element == TransactionAction {
    var sentCount: Int { filter { if case .send = $0 { true } else { false } }.count }
    var sent: [SIPMessage] { compactMap { if case .send(let m) = $0 { m } else { nil } } }
}
