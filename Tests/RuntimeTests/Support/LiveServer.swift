import Foundation
import Runtime
import Synchronization
import Wire

/// An `HTTPServer` on 127.0.0.1 port 0 with the test routes, on its own event loop group.
final class LiveServer: Sendable {
    let group: EventLoopGroup
    let server: HTTPServer
    let metrics: Metrics
    let port: UInt16
    let state: TestRouteState
    let staticRoot: String

    /// The server's defaults with a request deadline far above the seconds other tests of a run can hold
    /// the machine's cores for (tests of the deadlines themselves set their own).
    static var patient: HTTPServerConfiguration {
        var c = HTTPServerConfiguration()
        c.headerTimeout = .seconds(120)
        return c
    }

    init(configuration: HTTPServerConfiguration = LiveServer.patient, tls: TLSContext? = nil, threads: Int = 1) throws {
        group = EventLoopGroup(threads: threads, name: "test")
        metrics = Metrics()
        state = TestRouteState()
        staticRoot = NSTemporaryDirectory() + "runtime-static-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: staticRoot, withIntermediateDirectories: true)
        try Data("body { color: red; }\n".utf8).write(to: URL(fileURLWithPath: staticRoot + "/site.css"))
        try Data("<!doctype html><title>t</title>\n".utf8).write(to: URL(fileURLWithPath: staticRoot + "/index.html"))
        var router = Router()
        TestRoutes(state: state, files: StaticFiles(root: staticRoot)).install(on: &router)
        let loops = group.loops
        let whereAmI: HTTPHandler = { _ in .text(loops.contains { $0.inLoop } ? "loop" : "pool") }
        router.get("/where", whereAmI)
        router.get("/where-on-loop", onLoop: true, whereAmI)
        server = HTTPServer(group: group, configuration: configuration, responder: HTTPApplication(router: router), metrics: metrics)
        port = try server.listen(SocketAddress(host: "127.0.0.1", port: 0), tls: tls).port
    }

    var base: String { "http://127.0.0.1:\(port)" }

    func stop() async {
        await server.shutdown(gracePeriod: .milliseconds(200))
        group.shutdown()
        try? FileManager.default.removeItem(atPath: staticRoot)
    }
}

/// What the test routes share with the tests: requests seen in flight, WebSocket closes seen by the server.
final class TestRouteState: Sendable {
    let slowStarted = Atomic<Int>(0)
    let gatedStarted = Atomic<Int>(0)
    /// Blocks `/big-stream` has handed to its writer so far.
    let streamBlocks = Atomic<Int>(0)
    /// `/gated` answers only once a test opens this.
    let gateOpen = Atomic<Bool>(false)
    let serverCloses = Mutex<[UInt16]>([])
    let floodStopped = Atomic<Bool>(false)
    /// `/step/{n}`: the order handlers started in, and the most that ever ran at once.
    let steps = Mutex<[Int]>([])
    let stepsRunning = Atomic<Int>(0)
    let stepsMostAtOnce = Atomic<Int>(0)
}

/// The routes every live test can call.
struct TestRoutes {
    let state: TestRouteState
    let files: StaticFiles

    func install(on router: inout Router) {
        let state = self.state
        let files = self.files
        router.get("/hello") { _ in .text("hello") }
        router.get("/json") { _ in .jsonObject(["ok": true, "n": 42]) }
        router.post("/echo", bodyLimit: 1 << 20) { request in
            var r = HTTPResponse(status: 200, body: request.body)
            r.headers["Content-Type"] = request.headers["content-type"] ?? "application/octet-stream"
            return r
        }
        router.put("/echo") { request in HTTPResponse(status: 200, body: request.body) }
        router.post("/tiny", bodyLimit: 8) { request in HTTPResponse(status: 200, body: request.body) }
        router.get("/stream") { _ in
            HTTPResponse(status: 200, headers: ["Content-Type": "text/plain"]) { writer in
                for part in ["one", "two", "three"] {
                    try await writer.write(part)
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
        }
        router.get("/big-stream") { _ in
            // Far more than any socket buffer: the producer must be slowed by a peer that does not read.
            HTTPResponse(status: 200) { writer in
                let block = [UInt8](repeating: 0x61, count: 64 << 10)
                for _ in 0..<512 {
                    try await writer.write(block)
                    state.streamBlocks.wrappingAdd(1, ordering: .relaxed)
                }
            }
        }
        router.get("/slow") { _ in
            state.slowStarted.wrappingAdd(1, ordering: .relaxed)
            try await Task.sleep(for: .milliseconds(400))
            return .text("done")
        }
        router.get("/gated") { _ in
            state.gatedStarted.wrappingAdd(1, ordering: .relaxed)
            // Far past anything a test waits for: a loaded run can keep a test from opening the gate for
            // many seconds, and an answer sent before the test opens it would break what the test asserts.
            let deadline = ContinuousClock.now + .seconds(120)
            while !state.gateOpen.load(ordering: .relaxed) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            return .text("done")
        }
        router.get("/step/:n") { request in
            let n = Int(request.parameter("n")) ?? -1
            let running = state.stepsRunning.wrappingAdd(1, ordering: .relaxed).newValue
            state.stepsMostAtOnce.max(running, ordering: .relaxed)
            state.steps.withLock { $0.append(n) }
            // Long enough for a later request to overtake this one if requests ran side by side.
            try await Task.sleep(for: .milliseconds(n % 3 == 0 ? 15 : 1))
            state.stepsRunning.wrappingSubtract(1, ordering: .relaxed)
            if n % 5 == 0 {
                return HTTPResponse(status: 200, headers: ["Content-Type": "text/plain"]) { writer in
                    try await writer.write("step ")
                    try await writer.write(String(n))
                }
            }
            return .text("step \(n)")
        }
        router.get("/boom") { _ in throw CancellationError() }
        router.get("/static/*") { request in
            guard let r = files.response(for: request.parameter("*"), request: request) else { throw APIError.notFound() }
            return r
        }
        router.get("/ws") { request in try .webSocket(request, callbacks: Self.echo(state)) }
        router.get("/ws-small") { request in try .webSocket(request, maxMessageSize: 1024, callbacks: Self.echo(state)) }
        router.get("/ws-flood") { request in
            var cb = WebSocketCallbacks()
            cb.onOpen = { ws in
                Task {
                    let block = [UInt8](repeating: 0x62, count: 64 << 10)
                    while !state.floodStopped.load(ordering: .relaxed) {
                        ws.send(binary: block)
                        try? await Task.sleep(for: .milliseconds(1))
                    }
                }
            }
            cb.onClose = { _, code, _ in
                state.floodStopped.store(true, ordering: .relaxed)
                state.serverCloses.withLock { $0.append(code) }
            }
            return try .webSocket(request, callbacks: cb)
        }
    }

    /// Echoes messages; the text `close:<code>` makes the server close with that code.
    static func echo(_ state: TestRouteState) -> WebSocketCallbacks {
        var cb = WebSocketCallbacks()
        cb.onText = { ws, text in
            if text.hasPrefix("close:"), let code = UInt16(text.dropFirst(6)) {
                ws.close(code: code, reason: "asked")
            } else {
                ws.send(text: text)
            }
        }
        cb.onBinary = { ws, bytes in ws.send(binary: bytes) }
        cb.onClose = { _, code, _ in state.serverCloses.withLock { $0.append(code) } }
        return cb
    }
}

/// Collects events from callbacks on other threads; tests wait for what they expect with a deadline.
final class Inbox<Event: Sendable>: Sendable {
    private let events = Mutex<[Event]>([])

    func push(_ e: Event) { events.withLock { $0.append(e) } }

    var all: [Event] { events.withLock { $0 } }

    /// Waits until an event matches, returning it.
    func first(within timeout: Duration = .seconds(30), where match: (Event) -> Bool) async throws -> Event {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let e = events.withLock({ $0.first(where: match) }) { return e }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw LiveTestError.timeout("no matching event in \(all)")
    }
}

/// Polls `condition` until it holds or `timeout` passes.
func eventually(within timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}
