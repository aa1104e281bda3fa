import Foundation
import Runtime
import Synchronization
import Testing
import Wire
@testable import Telephony

/// Trunk registration and health checks against real sockets.
@Suite("Trunks live", .serialized)
struct TrunkLiveTests {
    final class Statuses: Sendable { let list = Mutex<[TrunkStatus]>([]) }

    static func endpoint(_ trunk: TrunkConfig, timers: SIPTimers = .default) async throws -> (EventLoop, SIPEndpoint, Statuses) {
        let loop = EventLoop()
        loop.startThread(name: "trunk-test")
        let statuses = Statuses()
        let ep = try await loop.submit { () throws -> SIPEndpoint in
            let ep = try SIPEndpoint(loop: loop, config: UserAgentConfig(host: "127.0.0.1", port: 0, timers: timers)) { _, _ in }
            ep.onTrunk = { _, status in statuses.list.withLock { $0.append(status) } }
            ep.updateTrunks([trunk])
            return ep
        }
        return (loop, ep, statuses)
    }

    @Test("registration with a carrier: digest SIPp verifies, registered, refreshed before the 2 s it granted run out")
    func registers() async throws {
        let sippPort = try freePort()
        async let sipp = runSIPp(["-sf", scenario("uas-registrar.xml"), "-i", "127.0.0.1", "-p", String(sippPort), "-m", "1"])
        try await Task.sleep(for: .milliseconds(500))
        let trunk = TrunkConfig(name: "carrier", host: "127.0.0.1", port: sippPort, credentials: .init(username: "trunk", password: "s3cret"),
                                register: true)
        let (loop, ep, statuses) = try await Self.endpoint(trunk)
        let (status, out) = try await sipp
        #expect(status == 0, "\(out)")
        let seen = statuses.list.withLock { $0 }
        #expect(seen.contains { $0.registration == .registered(expiresIn: 2) })
        #expect(seen.last?.registration == .registered(expiresIn: 60))
        #expect(seen.last?.up == true)
        _ = try? await loop.submit { ep.close() }
        loop.stop()
    }

    @Test("OPTIONS health: a SIPp that answers is up; a port nobody answers on goes down")
    func health() async throws {
        let sippPort = try freePort()
        async let sipp = runSIPp(["-sf", scenario("uas-options.xml"), "-i", "127.0.0.1", "-p", String(sippPort), "-m", "1"])
        try await Task.sleep(for: .milliseconds(500))
        let up = TrunkConfig(name: "alive", host: "127.0.0.1", port: sippPort, healthInterval: 30)
        let (loop, ep, statuses) = try await Self.endpoint(up)
        let deadline = ContinuousClock.now + .seconds(5)
        while statuses.list.withLock({ $0 }).isEmpty && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(statuses.list.withLock { $0 }.first?.up == true)
        _ = try? await loop.submit { ep.close() }
        loop.stop()
        _ = try? await sipp

        // Nothing listens: no answer within 64*T1 (T1 shortened to 20 ms here) → down.
        let dead = TrunkConfig(name: "dead", host: "127.0.0.1", port: try freePort(), healthInterval: 30)
        let (loop2, ep2, statuses2) = try await Self.endpoint(dead, timers: SIPTimers(t1: .milliseconds(20), t2: .milliseconds(160)))
        let deadline2 = ContinuousClock.now + .seconds(10)
        while statuses2.list.withLock({ $0 }).isEmpty && ContinuousClock.now < deadline2 { try await Task.sleep(for: .milliseconds(50)) }
        #expect(statuses2.list.withLock { $0 }.first?.up == false)
        _ = try? await loop2.submit { ep2.close() }
        loop2.stop()
    }
}
