import Foundation
import Runtime
import Testing
import Wire
@testable import Telephony

@Suite("SIP endpoint answers malformed and unwanted requests over UDP", .serialized)
struct SIPMalformedLiveTests {
    static func request(_ startLine: String, extra: String = "", method: String = "OPTIONS", body: String = "") -> String {
        "\(startLine)\r\nVia: SIP/2.0/UDP 127.0.0.1:5999;branch=z9hG4bK-\(UInt32.random(in: 0...UInt32.max))\r\n"
            + "From: <sip:probe@127.0.0.1>;tag=p1\r\nTo: <sip:sb@127.0.0.1>\r\nCall-ID: \(UUID().uuidString)@127.0.0.1\r\n"
            + "CSeq: 1 \(method)\r\nMax-Forwards: 70\r\n\(extra)Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    static let table: [(String, String, Int)] = [
        ("bad URI", request("OPTIONS sip:a b@127.0.0.1 SIP/2.0"), 400),
        ("extra spaces in the request line", request("OPTIONS  sip:sb@127.0.0.1 SIP/2.0"), 400),
        ("wrong version", request("OPTIONS sip:sb@127.0.0.1 SIP/3.0"), 505),
        ("unknown method", request("FROB sip:sb@127.0.0.1 SIP/2.0", method: "FROB"), 501),
        ("unknown URI scheme", request("OPTIONS urn:x:y SIP/2.0"), 416),
        ("Content-Length over the limit", request("OPTIONS sip:sb@127.0.0.1 SIP/2.0").replacingOccurrences(of: "Content-Length: 0", with: "Content-Length: 70000"), 513),
        ("CSeq method mismatch", request("OPTIONS sip:sb@127.0.0.1 SIP/2.0", method: "INVITE"), 400),
        ("Max-Forwards 0", request("OPTIONS sip:sb@127.0.0.1 SIP/2.0").replacingOccurrences(of: "Max-Forwards: 70", with: "Max-Forwards: 0"), 483),
        ("unsupported extension", request("OPTIONS sip:sb@127.0.0.1 SIP/2.0", extra: "Require: nothingSupportsThis\r\n"), 420),
        ("non-SDP body", request("INVITE sip:sb@127.0.0.1 SIP/2.0", extra: "Contact: <sip:probe@127.0.0.1:5999>\r\nContent-Type: application/unknownformat\r\n", method: "INVITE", body: "<x/>"), 415),
        ("well-formed OPTIONS", request("OPTIONS sip:sb@127.0.0.1 SIP/2.0"), 200),
    ]

    /// Sends `text` from a fresh socket and returns the first final response (nil after `timeout`; generous,
    /// as a loaded machine may run the endpoint's loop late).
    func exchange(_ text: String, port: UInt16, timeout: Duration = .seconds(20)) async throws -> SIPMessage? {
        let socket = try SIPUDPSocket(host: "127.0.0.1", port: 0)
        socket.send(Array(text.utf8), to: SIPPeer(host: "127.0.0.1", port: port))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)
        defer { buffer.deallocate() }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let (n, _) = socket.receive(into: buffer) {
                let m = try SIPMessage.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                if m.status != 100 { return m }
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    @Test("each malformed request gets its status with a reason, and the endpoint keeps serving")
    func table() async throws {
        let ep = try await LiveEndpoint()
        for (name, text, status) in Self.table {
            let reply = try await exchange(text, port: ep.port)
            #expect(reply?.status == status, "\(name)")
            #expect((reply?.reason ?? "").isEmpty == false, "\(name)")
        }
        // Garbage without the headers a response needs is dropped; the endpoint still answers after it.
        #expect(try await exchange("\u{0}\u{1}garbage", port: ep.port, timeout: .seconds(2)) == nil)
        #expect(try await exchange(Self.request("OPTIONS sip:sb@127.0.0.1 SIP/2.0"), port: ep.port)?.status == 200)
        await ep.stop()
    }

    @Test("requests from a source that is neither a trunk nor a device get 403")
    func forbidden() async throws {
        let ep = try await LiveEndpoint(devices: ["127.0.0.2"])
        #expect(try await exchange(Self.request("OPTIONS sip:sb@127.0.0.1 SIP/2.0"), port: ep.port)?.status == 403)
        await ep.stop()
    }
}
