import Crypto
import Foundation
import Glibc
import Platform
import Wire

/// `switchboard jwt-bench` (not listed in help): RS256 verification throughput on the calling thread,
/// for docs/benchmarks.md. Run it under `taskset -c 0` from a release build.
struct JWTBenchCommand {
    static let command = Command(name: "jwt-bench", summary: "", usage: usage) { args in
        try run(args)
    }

    static let usage = """
    Usage: switchboard jwt-bench [--seconds N] [--json]

    Measures, on one thread, for an RSA-2048 application token:
      rsa   RSAPublicKey.verify alone (SHA-256 + RSASSA-PKCS1-v1_5)
      decode JWT.decode alone: base64url and JSON of header and claims
      jwt   JWT.decode + signature + claim checks (what every Bearer request pays)
      auth  Authenticator.token: the above plus the application and user lookups in the store
    """

    static func run(_ argv: [String]) throws -> Int32 {
        let args = try Arguments(argv)
        try args.check(known: ["--seconds", "--json"])
        let seconds = Double(args["--seconds"] ?? "3") ?? 3
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("jwt-bench-\(UUID4.generate())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }

        let core = try PlatformCore(dataDirectory: dir)
        let (account, _) = try core.accounts.ensurePrimary()
        let (app, pem) = try core.applications.create(apiKey: account.apiKey, input: ApplicationInput(name: "bench"))
        guard let pem else { throw CLIError("no private key generated") }
        _ = try core.users.create(applicationID: app.id, input: UserInput(name: "alice"))
        let creds = AppCredentials(id: app.id, key: try RSAPrivateKey(pem: pem))
        let (token, _) = try creds.token(subject: "alice", acl: try JWTCommand.parseACL("client"), ttl: 3600)
        let publicKey = try core.applications.publicKey(of: app)
        let decoded = try JWT.decode(token)
        let authenticator = Authenticator(core: core)

        var results: [(String, (wall: Double, cpu: Double))] = []
        results.append(("rsa", measure(seconds) { publicKey.verify(signature: decoded.signature, sha256: decoded.signingInput) }))
        results.append(("decode", measure(seconds) { (try? JWT.decode(token)) != nil }))
        results.append(("jwt", measure(seconds) {
            (try? JWT.verify(token, key: .rs256(publicKey), now: Date(), maxLifetime: Authenticator.maxLifetime)) != nil
        }))
        results.append(("auth", measure(seconds) { (try? authenticator.token(token)) != nil }))

        if args.flag("--json") {
            Output.print(Output.json(.object(Dictionary(uniqueKeysWithValues: results.map {
                ($0.0, JSONValue.object(["wall_per_s": .number($0.1.wall.rounded()), "cpu_per_s": .number($0.1.cpu.rounded())]))
            }))))
        } else {
            Output.print(Output.table(["PATH", "PER WALL SECOND", "PER CPU SECOND"], results.map { [$0.0, String(Int($0.1.wall)), String(Int($0.1.cpu))] }))
        }
        return 0
    }

    /// Calls `body` until `seconds` of wall time pass; returns calls per second of wall time and per second of
    /// this thread's CPU time (the latter stays meaningful when other processes share the core).
    static func measure(_ seconds: Double, _ body: () -> Bool) -> (wall: Double, cpu: Double) {
        for _ in 0..<50 { precondition(body(), "benchmark operation failed") }
        let wallStart = monotonic(CLOCK_MONOTONIC)
        let cpuStart = monotonic(CLOCK_THREAD_CPUTIME_ID)
        var count = 0
        var now = wallStart
        while now - wallStart < seconds {
            for _ in 0..<64 { precondition(body(), "benchmark operation failed") }
            count += 64
            now = monotonic(CLOCK_MONOTONIC)
        }
        let cpu = monotonic(CLOCK_THREAD_CPUTIME_ID) - cpuStart
        return (Double(count) / (now - wallStart), Double(count) / cpu)
    }

    static func monotonic(_ clock: clockid_t) -> Double {
        var t = timespec()
        clock_gettime(clock, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}
