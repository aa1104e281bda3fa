import Media
import Synchronization
import Testing
@testable import Live

@Suite("Finding or creating a room's router")
struct RouterRaceTests {
    static func routers(_ engine: MediaEngine) async -> Int {
        await engine.workerStats().map(\.routers).reduce(0, +)
    }

    @Test("a first use that lost the race gets the winner's router, and its own is closed")
    func lostRaceKeepsTheFirst() async throws {
        let engine = try loopbackEngine()
        defer { engine.shutdown() }
        let stored = Mutex<RouterID?>(nil)
        // Both calls look before either has stored: the way two first requests interleave.
        func claim() async throws -> RouterID {
            try await engine.findOrCreateRouter(existing: { nil }, keep: { id in
                stored.withLock { current in
                    if let current { return current }
                    current = id
                    return id
                }
            })
        }
        let first = try await claim()
        let second = try await claim()
        #expect(first == second)
        #expect(stored.withLock { $0 } == first)
        #expect(await Self.routers(engine) == 1)
    }

    @Test("an existing router is used without creating one")
    func existing() async throws {
        let engine = try loopbackEngine()
        defer { engine.shutdown() }
        let id = try await engine.createRouter()
        let found = try await engine.findOrCreateRouter(existing: { id }, keep: { _ in
            Issue.record("nothing to keep")
            return id
        })
        #expect(found == id)
        #expect(await Self.routers(engine) == 1)
    }

    @Test("concurrent first requests to one bench room share one router", arguments: [2, 8])
    func concurrentBench(requests: Int) async throws {
        let engine = try loopbackEngine()
        defer { engine.shutdown() }
        let bench = MediaBench(engine: engine)
        let ids = try await withThrowingTaskGroup(of: RouterID.self) { group in
            for _ in 0..<requests { group.addTask { try await bench.router(named: "r") } }
            return try await group.reduce(into: Set<RouterID>()) { $0.insert($1) }
        }
        #expect(ids.count == 1)
        #expect(await Self.routers(engine) == 1)
    }

    @Test("concurrent first publishes of one video session share one router")
    func concurrentVideo() async throws {
        let engine = try loopbackEngine()
        defer { engine.shutdown() }
        let bridge = EngineVideoMediaBridge(engine: engine)
        let ids = try await withThrowingTaskGroup(of: RouterID.self) { group in
            for _ in 0..<4 { group.addTask { try await bridge.router(for: "s") } }
            return try await group.reduce(into: Set<RouterID>()) { $0.insert($1) }
        }
        #expect(ids.count == 1)
        #expect(await Self.routers(engine) == 1)
        #expect(bridge.activeRouters == 1)
    }
}
