import API
import Crypto
import Foundation
import Platform
import Runtime
import Synchronization
import Testing
import Wire
@testable import SwitchboardClient

/// A whole Switchboard server in-process on loopback ports (HTTP and media on port 0), with one
/// application whose key signs the user tokens the SDK logs in with.
final class LiveServer: Sendable {
    let directory: String
    let server: SwitchboardServer
    let url: URL
    let applicationID: String
    let key: RSAPrivateKey

    init(development: Bool = true, pingInterval: Duration = .seconds(15), iceServers: ICEServers = .none) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-live-\(UUID4.generate())").path
        var configuration = ServerConfiguration()
        configuration.listen = SocketAddress(host: "127.0.0.1", port: 0)
        configuration.dataDirectory = directory
        configuration.threads = 1
        configuration.mediaPort = 0
        configuration.development = development
        configuration.realtimePingInterval = pingInterval
        configuration.shutdownGrace = .milliseconds(200)
        configuration.logLevel = .error
        configuration.iceServers = iceServers
        server = try SwitchboardServer(configuration: configuration)
        let port = try server.start().http.port
        url = URL(string: "http://127.0.0.1:\(port)")!
        let (app, pem) = try server.core.applications.create(apiKey: server.account.0.apiKey, input: ApplicationInput(name: "sdk-tests"))
        applicationID = app.id
        key = try RSAPrivateKey(pem: pem!)
    }

    /// Runs `body` against a fresh server and stops it afterwards, whatever happened.
    static func with(development: Bool = true, iceServers: ICEServers = .none, _ body: (LiveServer) async throws -> Void) async throws {
        let live = try LiveServer(development: development, iceServers: iceServers)
        do {
            try await body(live)
        } catch {
            await live.stop()
            throw error
        }
        await live.stop()
    }

    func stop() async {
        await server.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Creates the user (once) and returns a client token for it.
    func userToken(_ name: String, lifetime: TimeInterval = 3600, issuedAgo: TimeInterval = 0, acl: [String]? = ACL.clientPaths) throws -> String {
        if try server.core.users.find(name: name, applicationID: applicationID) == nil {
            _ = try server.core.users.create(applicationID: applicationID, input: UserInput(name: name, displayName: .some(name)))
        }
        let iat = Date().timeIntervalSince1970.rounded(.down) - issuedAgo
        var claims: [String: JSONValue] = ["application_id": .string(applicationID), "sub": .string(name), "iat": .number(iat),
                                           "exp": .number(iat + lifetime), "jti": .string(UUID4.generate())]
        if let acl { claims["acl"] = ["paths": .object(Dictionary(uniqueKeysWithValues: acl.map { ($0, JSONValue.object([:])) }))] }
        return try JWT.sign(claims: claims, key: .rs256(key))
    }

    /// An application token (creates conversations, posts events as any member).
    func appToken() throws -> String {
        let iat = Date().timeIntervalSince1970.rounded(.down)
        return try JWT.sign(claims: ["application_id": .string(applicationID), "iat": .number(iat), "exp": .number(iat + 900),
                                     "jti": .string(UUID4.generate())], key: .rs256(key))
    }

    /// A conversation of the test application.
    func conversation(_ name: String) throws -> String {
        try server.core.conversations.create(applicationID: applicationID, input: .init(name: name)).id
    }

    /// Calls the REST API with the application token.
    func rest(_ method: HTTPMethod, _ path: String, _ body: JSONValue? = nil) async throws -> JSONValue {
        let client = RESTClient(base: url, token: { [self] in (try? appToken()) ?? "" }, caFile: nil)
        return try await client.call(method, path, body: body)
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Collects a stream's elements on a task so a test can wait for a condition on them.
final class Collector<Element: Sendable>: Sendable {
    let items = Mutex<[Element]>([])
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(_ stream: AsyncStream<Element>) {
        let t = Task { [weak self] in
            for await e in stream { self?.items.withLock { $0.append(e) } }
        }
        task.withLock { $0 = t }
    }

    var all: [Element] { items.withLock { $0 } }

    /// Waits up to `seconds` for `condition` on everything collected so far (see `pollTurns`).
    func wait(seconds: Double = 10, until condition: ([Element]) -> Bool) async -> Bool {
        for _ in 0..<pollTurns(seconds) {
            if condition(all) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition(all)
    }

    deinit { task.withLock { $0?.cancel() } }
}

/// Polls `condition` for up to `seconds` (see `pollTurns`).
func eventually(seconds: Double = 10, _ condition: () async -> Bool) async -> Bool {
    for _ in 0..<pollTurns(seconds) {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return await condition()
}

/// How many 20 ms looks make `seconds` of waiting. Waits count looks rather than read the clock: while
/// the suite starts, every test at once can hold both cores' task threads for seconds, and then the
/// pushes a test waits for and its own looks are held up alike; counted looks give the test its full
/// share of waiting however long it was held, and take `seconds` when nothing holds it up.
func pollTurns(_ seconds: Double) -> Int { max(1, Int(seconds * 50)) }
