import Foundation
import Runtime
import Synchronization
import Testing
import Wire
@testable import Telephony

/// A SIPEndpoint on its own loop, on 127.0.0.1 and a kernel-chosen port, answering calls the way
/// a user would: `busy@` gets 486, `ring@` is left ringing, anyone else is answered with SDP.
final class LiveEndpoint: Sendable {
    let loop = EventLoop()
    let log = EventLog()
    func snapshot() -> [CallEvent] { log.events.withLock { $0 } }
    // Set once in init on the loop before any other use; read-only afterwards.
    nonisolated(unsafe) private(set) var endpoint: SIPEndpoint!

    init(devices: [String] = ["127.0.0.1"], trunks: [TrunkConfig] = [], tls: SIPTLSConfig? = nil) async throws {
        loop.startThread(name: "sip-test")
        let config = UserAgentConfig(host: "127.0.0.1", port: 0, trunks: trunks, devices: devices)
        endpoint = try await loop.submit { [log] in
            try SIPEndpoint(loop: self.loop, config: config, tls: tls) { endpoint, event in
                log.events.withLock { $0.append(event) }
                guard case .incomingCall(let id, _, let to, let offer) = event else { return }
                let local = AudioSessionConfig(address: "127.0.0.1", port: 40_000)
                switch to.uri.user {
                case "busy": endpoint.reject(id, status: 486)
                case "ring": break
                case "early":
                    // Early media first, the answer a little later (after the caller's PRACK).
                    let sdp = offer.flatMap { try? PlainRTPNegotiator.answer($0, local: local, sessionID: 1, version: 1).0 }
                    endpoint.progress(id, sdp: sdp)
                    _ = endpoint.loop.schedule(after: .milliseconds(400)) {
                        endpoint.answer(id, sdp: sdp ?? PlainRTPNegotiator.offer(local, sessionID: 1, version: 1))
                    }
                default:
                    let sdp = offer.flatMap { try? PlainRTPNegotiator.answer($0, local: local, sessionID: 1, version: 1).0 }
                        ?? PlainRTPNegotiator.offer(local, sessionID: 1, version: 1)
                    endpoint.answer(id, sdp: sdp)
                }
            }
        }
    }

    var port: UInt16 { endpoint.port }

    func stop() async {
        _ = try? await loop.submit { self.endpoint.close() }
        loop.stop()
    }

    /// Waits (polling, wide margin) until an event matches.
    func wait(timeout: Duration = .seconds(10), _ match: (CallEvent) -> Bool) async -> CallEvent? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let e = snapshot().first(where: match) { return e }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }
}

/// Call events as the endpoint reported them.
final class EventLog: Sendable {
    let events = Mutex<[CallEvent]>([])
}

/// Runs sipp to completion and returns its exit status and output. Its output goes to a file, not a
/// pipe: sipp redraws its statistics screen the whole time, and a pipe nobody reads fills up and blocks
/// it for good. A sipp still running at `timeout` is stopped, killed if it ignores that.
func runSIPp(_ arguments: [String], timeout: Duration = .seconds(30)) async throws -> (Int32, String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/sipp")
    p.arguments = arguments + ["-nostdin", "-timeout", "20s", "-timeout_error"]
    let log = FileManager.default.temporaryDirectory.appendingPathComponent("sipp-\(UUID().uuidString).log").path
    _ = FileManager.default.createFile(atPath: log, contents: nil)
    defer { try? FileManager.default.removeItem(atPath: log) }
    let out = FileHandle(forWritingAtPath: log)
    p.standardOutput = out
    p.standardError = out
    try p.run()
    var deadline = ContinuousClock.now + timeout
    while p.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
    if p.isRunning {
        p.terminate()
        deadline = ContinuousClock.now + .seconds(3)
        while p.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
    }
    while p.isRunning { try await Task.sleep(for: .milliseconds(20)) }
    try? out?.close()
    let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    return (p.terminationStatus, String(text.suffix(3000)))
}

func scenario(_ name: String) -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/sip/sipp/\(name)").path
}

/// A UDP port free right now (bound by the kernel, then released).
func freePort() throws -> UInt16 { try SIPUDPSocket(host: "127.0.0.1", port: 0).port }

/// A port free right now for UDP and for TCP: SIPp over TCP binds its `-p` port for TCP (exit status 254 when
/// it cannot), and a port free for UDP may be the local port of a TCP connection of a test running beside
/// this one. The probe binds and listens there, as SIPp does, then lets go. With `tlsNext`, the port after it too,
/// where baresip listens for SIP over TLS (it fails to start when that port is taken).
func freeTCPPort(tlsNext: Bool = false) throws -> UInt16 {
    for _ in 0..<100 {
        let port = try freePort()
        guard let probe = try? TCPListener(address: SocketAddress(host: "127.0.0.1", port: port)) else { continue }
        defer { probe.close() }
        if tlsNext {
            guard port < UInt16.max, let next = try? TCPListener(address: SocketAddress(host: "127.0.0.1", port: port + 1)) else { continue }
            next.close()
        }
        return port
    }
    throw POSIXError(.EADDRINUSE)
}

@Suite("SIP endpoint live with SIPp", .serialized)
struct SIPEndpointLiveTests {
    @Test("SIPp OPTIONS gets 200 with Allow")
    func options() async throws {
        let ep = try await LiveEndpoint()
        let (status, out) = try await runSIPp(["-sf", scenario("options.xml"), "127.0.0.1:\(ep.port)", "-i", "127.0.0.1",
                                               "-p", String(try freePort()), "-m", "2", "-s", "probe"])
        await ep.stop()
        #expect(status == 0, "\(out)")
    }

    @Test("SIPp as caller: INVITE → 100 → 200 → ACK → BYE, three calls")
    func inbound() async throws {
        let ep = try await LiveEndpoint()
        let (status, out) = try await runSIPp(["-sn", "uac", "127.0.0.1:\(ep.port)", "-i", "127.0.0.1",
                                               "-p", String(try freePort()), "-m", "3", "-r", "3", "-s", "alice"])
        #expect(status == 0, "\(out)")
        let ended = ep.snapshot().filter { if case .ended(_, nil, "BYE") = $0 { true } else { false } }.count
        let connected = ep.snapshot().filter { if case .connected = $0 { true } else { false } }.count
        #expect(ended == 3 && connected == 3)
        await ep.stop()
    }

    @Test("SIPp calls a busy user: 486 and the ACK absorbed")
    func busy() async throws {
        let ep = try await LiveEndpoint()
        let (status, out) = try await runSIPp(["-sf", scenario("uac-busy.xml"), "127.0.0.1:\(ep.port)", "-i", "127.0.0.1",
                                               "-p", String(try freePort()), "-m", "1", "-s", "busy"])
        #expect(status == 0, "\(out)")
        #expect(await ep.wait { if case .ended(_, 486, _) = $0 { true } else { false } } != nil)
        await ep.stop()
    }

    @Test("SIPp cancels before the answer: 200 for the CANCEL, 487 for the INVITE")
    func cancel() async throws {
        let ep = try await LiveEndpoint()
        let (status, out) = try await runSIPp(["-sf", scenario("uac-cancel.xml"), "127.0.0.1:\(ep.port)", "-i", "127.0.0.1",
                                               "-p", String(try freePort()), "-m", "1", "-s", "ring"])
        #expect(status == 0, "\(out)")
        #expect(await ep.wait { if case .ended(_, 487, _) = $0 { true } else { false } } != nil)
        await ep.stop()
    }

    @Test("outbound call answered by SIPp UAS, then hung up with BYE")
    func outbound() async throws {
        let sippPort = try freePort()
        async let sipp = runSIPp(["-sn", "uas", "-i", "127.0.0.1", "-p", String(sippPort), "-m", "1"])
        try await Task.sleep(for: .milliseconds(500))
        let trunk = TrunkConfig(name: "sipp", host: "127.0.0.1", port: sippPort)
        let ep = try await LiveEndpoint(trunks: [trunk])
        let id = try await ep.loop.submit {
            ep.endpoint.invite(to: SIPURI(user: "+15550100", host: "127.0.0.1", port: sippPort),
                               from: SIPAddress(uri: SIPURI(user: "switchboard", host: "127.0.0.1")),
                               sdp: PlainRTPNegotiator.offer(AudioSessionConfig(address: "127.0.0.1", port: 40_002), sessionID: 2, version: 1),
                               trunk: trunk)
        }
        #expect(await ep.wait { if case .connected(id, _) = $0 { true } else { false } } != nil)
        try await ep.loop.submit { ep.endpoint.hangup(id) }
        let (status, out) = try await sipp
        #expect(status == 0, "\(out)")
        await ep.stop()
    }

    @Test("a trunk's 401 is answered with digest credentials SIPp verifies")
    func digest() async throws {
        let sippPort = try freePort()
        async let sipp = runSIPp(["-sf", scenario("uas-digest.xml"), "-i", "127.0.0.1", "-p", String(sippPort), "-m", "1"])
        try await Task.sleep(for: .milliseconds(500))
        let trunk = TrunkConfig(name: "sipp", host: "127.0.0.1", port: sippPort,
                                credentials: .init(username: "trunk", password: "s3cret"))
        let ep = try await LiveEndpoint(trunks: [trunk])
        let id = try await ep.loop.submit {
            ep.endpoint.invite(to: SIPURI(user: "+15550101", host: "127.0.0.1", port: sippPort),
                               from: SIPAddress(uri: SIPURI(user: "switchboard", host: "127.0.0.1")),
                               sdp: PlainRTPNegotiator.offer(AudioSessionConfig(address: "127.0.0.1", port: 40_004), sessionID: 3, version: 1),
                               trunk: trunk)
        }
        #expect(await ep.wait { if case .connected(id, _) = $0 { true } else { false } } != nil)
        try await ep.loop.submit { ep.endpoint.hangup(id) }
        let (status, out) = try await sipp
        #expect(status == 0, "\(out)")
        await ep.stop()
    }
}
