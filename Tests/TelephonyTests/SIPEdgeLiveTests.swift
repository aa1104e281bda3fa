import Crypto
import Foundation
import Runtime
import Synchronization
import Testing
import Wire
@testable import Telephony

/// A directory kept in memory: the numbers and device passwords a test sets up.
final class TableDirectory: TelephonyDirectory {
    let numbers: [String: NumberRoute]
    let devices: [String: String]
    init(numbers: [String: NumberRoute] = [:], devices: [String: String] = [:]) {
        self.numbers = numbers
        self.devices = devices
    }
    func route(number: String) -> NumberRoute? { numbers[number] }
    func deviceHA1(realm: String, username: String) -> String? {
        devices["\(username)@\(realm)"].map { DigestAlgorithm.md5.hex("\(username):\(realm):\($0)") }
    }
}

/// Answers every offered call with SDP and records what it was offered.
final class AnsweringHandler: IncomingCallHandler {
    let offered = Mutex<[String]>([])
    func incomingCall(_ call: IncomingCall) {
        offered.withLock { $0.append(call.number) }
        let local = AudioSessionConfig(address: "127.0.0.1", port: 40_010)
        call.answer(sdp: call.offer.flatMap { try? PlainRTPNegotiator.answer($0, local: local, sessionID: 1, version: 1).0 }
                    ?? PlainRTPNegotiator.offer(local, sessionID: 1, version: 1))
    }
}

@Suite("SIP edge live", .serialized)
struct SIPEdgeLiveTests {
    static func expectStatus(_ status: Int) -> String {
        // A one-off scenario: INVITE, then exactly `status` (ACKed by SIPp's transaction layer).
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("uac-\(status)-\(UUID().uuidString).xml").path
        let xml = """
        <?xml version="1.0" encoding="ISO-8859-1" ?>
        <scenario name="expect \(status)">
          <send retrans="500"><![CDATA[

            INVITE sip:[service]@[remote_ip]:[remote_port] SIP/2.0
            Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
            From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
            To: <sip:[service]@[remote_ip]:[remote_port]>
            Call-ID: [call_id]
            CSeq: 1 INVITE
            Contact: sip:sipp@[local_ip]:[local_port]
            Max-Forwards: 70
            Content-Length: 0

          ]]></send>
          <recv response="100" optional="true"/>
          <recv response="\(status)"/>
          <send><![CDATA[

            ACK sip:[service]@[remote_ip]:[remote_port] SIP/2.0
            [last_Via:]
            From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
            To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
            Call-ID: [call_id]
            CSeq: 1 ACK
            Max-Forwards: 70
            Content-Length: 0

          ]]></send>
        </scenario>
        """
        _ = FileManager.default.createFile(atPath: path, contents: Data(xml.utf8))
        return path
    }

    static func edge(_ directory: TableDirectory, trunks: [TrunkConfig]) async throws -> (SIPEdge, UInt16) {
        let edge = SIPEdge(config: UserAgentConfig(host: "127.0.0.1", port: 0, trunks: trunks), directory: directory)
        return (edge, try await edge.start())
    }

    @Test("an edge whose loop does not run refuses calls at once instead of waiting for it")
    func notRunningRefuses() async throws {
        let sdp = PlainRTPNegotiator.offer(AudioSessionConfig(address: "127.0.0.1", port: 40_020), sessionID: 1, version: 1)
        let never = SIPEdge(config: UserAgentConfig(host: "127.0.0.1", port: 0), directory: TableDirectory())
        let uri = SIPURI(user: "desk", host: "127.0.0.1", port: 9)
        await #expect(throws: EdgeError.stopped) { try await never.callURI(uri, at: ["127.0.0.1"], from: "a", sdp: sdp) }
        await #expect(throws: EdgeError.stopped) { try await never.callUser("alice@app", from: "a", sdp: sdp) }
        // Started, then stopped: the same.
        let (edge, _) = try await Self.edge(TableDirectory(), trunks: [])
        await edge.stop()
        await #expect(throws: EdgeError.stopped) { try await edge.callURI(uri, at: ["127.0.0.1"], from: "a", sdp: sdp) }
        await edge.stop()
    }

    @Test("a trunk list handed to the edge is in force when the call returns: the next INVITE from its source is screened by it")
    func trunksInForceOnReturn() async throws {
        let (edge, port) = try await Self.edge(TableDirectory(), trunks: [])
        let uac = { (status: Int) async throws -> (Int32, String) in
            try await runSIPp(["-sf", Self.expectStatus(status), "127.0.0.1:\(port)", "-i", "127.0.0.1", "-p", String(try freePort()),
                               "-m", "1", "-s", "15559999"])
        }
        var (rc, out) = try await uac(403)
        #expect(rc == 0, "no trunk: the source is refused; \(out)")
        edge.updateTrunks([TrunkConfig(name: "carrier", host: "127.0.0.1", healthInterval: 0)])
        #expect(edge.snapshot.trunks.map(\.name) == ["carrier"])
        (rc, out) = try await uac(404)
        #expect(rc == 0, "the trunk's source is let in, and the unknown number is not found; \(out)")
        edge.updateTrunks([])
        #expect(edge.snapshot.trunks.isEmpty)
        await edge.stop()
        // A stopped edge neither applies the list nor keeps its caller waiting.
        edge.updateTrunks([TrunkConfig(name: "late", host: "127.0.0.1", healthInterval: 0)])
        #expect(edge.snapshot.trunks.isEmpty)
    }

    @Test("inbound from a trunk: unknown number 404, owned number with no application 480, with one it reaches the handler")
    func routing() async throws {
        let trunk = TrunkConfig(name: "carrier", host: "127.0.0.1", healthInterval: 0)
        let directory = TableDirectory(numbers: ["15550001": NumberRoute(msisdn: "15550001", applicationID: nil, trunk: "carrier"),
                                                 "15550002": NumberRoute(msisdn: "15550002", applicationID: "app-1", trunk: "carrier")])
        let (edge, port) = try await Self.edge(directory, trunks: [trunk])
        for (number, status) in [("15559999", 404), ("15550001", 480), ("+15550002", 480)] {
            let (rc, out) = try await runSIPp(["-sf", Self.expectStatus(status), "127.0.0.1:\(port)", "-i", "127.0.0.1",
                                               "-p", String(try freePort()), "-m", "1", "-s", number])
            #expect(rc == 0, "\(number): \(out)")
        }
        // With a handler, the number with an application is offered and answered.
        let handler = AnsweringHandler()
        edge.setHandler(handler)
        let (rc, out) = try await runSIPp(["-sn", "uac", "127.0.0.1:\(port)", "-i", "127.0.0.1", "-p", String(try freePort()),
                                           "-m", "1", "-s", "15550002"])
        #expect(rc == 0, "\(out)")
        #expect(handler.offered.withLock { $0 } == ["15550002"])
        #expect(edge.snapshot.statistics.responses.contains { $0.key.status == 480 && $0.key.direction == "out" })
        await edge.stop()
    }

    @Test("a phone registers with digest, then callUser reaches its contact with the call's headers and hangs up")
    func registerAndCall() async throws {
        let directory = TableDirectory(devices: ["alice@app-1": "pa55w0rd!"])
        let (edge, port) = try await Self.edge(directory, trunks: [])
        let phonePort = try freePort()
        // The phone checks the headers the call carries (the scenario fails without them).
        async let phone = runSIPp(["-sf", scenario("uas-x-headers.xml"), "-i", "127.0.0.1", "-p", String(phonePort), "-m", "1"])
        let (registered, out) = try await runSIPp(["-sf", scenario("register.xml"), "127.0.0.1:\(port)", "-i", "127.0.0.1",
                                                   "-p", String(try freePort()), "-m", "1", "-s", "alice",
                                                   "-key", "contact_port", String(phonePort)])
        #expect(registered == 0, "\(out)")
        #expect(edge.snapshot.bindings == 1)
        let offer = PlainRTPNegotiator.offer(AudioSessionConfig(address: "127.0.0.1", port: 40_012), sessionID: 3, version: 1)
        let headers = [("X-Account", "42"), ("X-Note", "blue sky"), ("User-to-User", "56a390f3d2b7310023a2;encoding=hex")]
        let call = try await edge.callUser("alice@app-1", from: "15550100", headers: headers, sdp: offer)
        var connected = false
        for await event in call.events {
            if case .connected = event { connected = true; call.hangup() }
            if case .ended = event { break }
        }
        #expect(connected)
        let (rc, answered) = try await phone
        #expect(rc == 0, "\(answered)")
        await #expect(throws: EdgeError.notRegistered("bob@app-1")) { try await edge.callUser("bob@app-1", from: "1", sdp: offer) }
        await edge.stop()
    }
}
