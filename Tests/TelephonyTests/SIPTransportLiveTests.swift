import Foundation
import Runtime
import Testing
import Wire
@testable import Telephony

/// TCP and RFC 3262 against SIPp.
@Suite("SIP over TCP and 100rel, live with SIPp", .serialized)
struct SIPTransportLiveTests {
    @Test("SIPp calls over TCP: three calls on one connection, answered and hung up")
    func inboundTCP() async throws {
        let ep = try await LiveEndpoint()
        let (status, out) = try await runSIPp(["-sn", "uac", "-t", "t1", "127.0.0.1:\(ep.port)", "-i", "127.0.0.1",
                                               "-p", String(try freeTCPPort()), "-m", "3", "-r", "3", "-s", "alice"])
        #expect(status == 0, "\(out)")
        let ended = ep.snapshot().filter { if case .ended(_, nil, "BYE") = $0 { true } else { false } }.count
        #expect(ended == 3)
        await ep.stop()
    }

    @Test("outbound call through a TCP trunk answered by SIPp, hung up with BYE on the same connection")
    func outboundTCP() async throws {
        let sippPort = try freeTCPPort()
        async let sipp = runSIPp(["-sn", "uas", "-t", "t1", "-i", "127.0.0.1", "-p", String(sippPort), "-m", "1"])
        try await Task.sleep(for: .milliseconds(500))
        let trunk = TrunkConfig(name: "sipp", host: "127.0.0.1", port: sippPort, transport: .tcp, healthInterval: 0)
        let ep = try await LiveEndpoint(trunks: [trunk])
        let id = try await ep.loop.submit {
            ep.endpoint.invite(to: SIPURI(user: "15550100", host: "127.0.0.1", port: sippPort),
                               from: SIPAddress(uri: SIPURI(user: "switchboard", host: "127.0.0.1")),
                               sdp: PlainRTPNegotiator.offer(AudioSessionConfig(address: "127.0.0.1", port: 40_002), sessionID: 2, version: 1),
                               trunk: trunk)
        }
        #expect(await ep.wait { if case .connected(id, _) = $0 { true } else { false } } != nil)
        #expect(try await ep.loop.submit { ep.endpoint.connectionCount } == 1)
        try await ep.loop.submit { ep.endpoint.hangup(id) }
        let (status, out) = try await sipp
        #expect(status == 0, "\(out)")
        await ep.stop()
    }

    @Test("a TCP trunk nobody listens on fails the call at once, not after 32 s", .timeLimit(.minutes(1)))
    func refusedTCP() async throws {
        let port = try freeTCPPort()
        let trunk = TrunkConfig(name: "dead", host: "127.0.0.1", port: port, transport: .tcp, healthInterval: 0)
        let ep = try await LiveEndpoint(trunks: [trunk])
        let started = ContinuousClock.now
        let id = try await ep.loop.submit {
            ep.endpoint.invite(to: SIPURI(user: "1", host: "127.0.0.1", port: port), from: SIPAddress(uri: SIPURI(user: "s", host: "127.0.0.1")),
                               sdp: PlainRTPNegotiator.offer(AudioSessionConfig(address: "127.0.0.1", port: 40_006), sessionID: 4, version: 1),
                               trunk: trunk)
        }
        #expect(await ep.wait { if case .ended(id, _, _) = $0 { true } else { false } } != nil)
        #expect(ContinuousClock.now - started < .seconds(10))
        await ep.stop()
    }

    @Test("SIPp with 100rel: our reliable 183 carries SDP and RSeq, its PRACK gets 200, then the answer")
    func reliableProvisional() async throws {
        let ep = try await LiveEndpoint()
        let (status, out) = try await runSIPp(["-sf", scenario("uac-100rel.xml"), "127.0.0.1:\(ep.port)", "-i", "127.0.0.1",
                                               "-p", String(try freePort()), "-m", "1", "-s", "early"])
        #expect(status == 0, "\(out)")
        #expect(await ep.wait { if case .ended(_, nil, "BYE") = $0 { true } else { false } } != nil)
        await ep.stop()
    }

    @Test("a carrier's reliable 183 is PRACKed, early media reported, the call connects")
    func sendsPrack() async throws {
        let sippPort = try freePort()
        async let sipp = runSIPp(["-sf", scenario("uas-100rel.xml"), "-i", "127.0.0.1", "-p", String(sippPort), "-m", "1"])
        try await Task.sleep(for: .milliseconds(500))
        let trunk = TrunkConfig(name: "sipp", host: "127.0.0.1", port: sippPort, healthInterval: 0)
        let ep = try await LiveEndpoint(trunks: [trunk])
        let id = try await ep.loop.submit {
            ep.endpoint.invite(to: SIPURI(user: "15550102", host: "127.0.0.1", port: sippPort),
                               from: SIPAddress(uri: SIPURI(user: "switchboard", host: "127.0.0.1")),
                               sdp: PlainRTPNegotiator.offer(AudioSessionConfig(address: "127.0.0.1", port: 40_008), sessionID: 5, version: 1),
                               trunk: trunk)
        }
        #expect(await ep.wait { if case .progress(id, 183, .some) = $0 { true } else { false } } != nil)
        #expect(await ep.wait { if case .connected(id, _) = $0 { true } else { false } } != nil)
        try await ep.loop.submit { ep.endpoint.hangup(id) }
        let (status, out) = try await sipp
        #expect(status == 0, "\(out)")
        await ep.stop()
    }
}
