import Crypto
import Runtime
import Wire

/// The server side of digest authentication with stateless nonces.
///
/// A nonce is `<issued-ms>.<hex HMAC-SHA256(secret, issued-ms:realm)>`: the server recognises
/// its own nonces and their age without storing them. An expired but genuine nonce gets a new
/// challenge with `stale=true` so the device retries without asking its user (RFC 7616 §3.3).
/// Nonce counts are not tracked, so a captured request can be replayed while its nonce lives;
/// keep `nonceLifetime` short.
public struct DigestVerifier: Sendable {
    public enum Verdict: Hashable, Sendable {
        case authorized(username: String)
        /// Right password, expired nonce: challenge again with stale=true.
        case stale
        case rejected
    }

    public let realm: String
    public let nonceLifetime: Duration
    public let algorithm: DigestAlgorithm
    private let secret: [UInt8]

    public init(realm: String, secret: [UInt8], algorithm: DigestAlgorithm = .sha256, nonceLifetime: Duration = .seconds(300)) {
        self.realm = realm
        self.secret = secret
        self.algorithm = algorithm
        self.nonceLifetime = nonceLifetime
    }

    public func nonce(now: Instant) -> String {
        let issued = String(now.milliseconds)
        return issued + "." + Hex.encode(HMAC.sha256(key: secret, data: Array("\(issued):\(realm)".utf8)))
    }

    public func challenge(now: Instant, stale: Bool = false) -> DigestChallenge {
        DigestChallenge(realm: realm, nonce: nonce(now: now), algorithm: algorithm, qop: ["auth"], stale: stale)
    }

    /// Checks credentials for a request; `password` looks up a user's password (nil: unknown user).
    public func verify(_ credentials: DigestCredentials, method: SIPMethod, now: Instant,
                       password: (String) -> String?) -> Verdict {
        verify(credentials, method: method, now: now, ha1: { username in
            password(username).map { credentials.algorithm.hex("\(username):\(realm):\($0)") }
        })
    }

    /// Checks credentials against a stored `H(username:realm:password)` (nil: unknown user), so
    /// passwords need not be kept.
    public func verify(_ credentials: DigestCredentials, method: SIPMethod, now: Instant,
                       ha1 lookup: (String) -> String?) -> Verdict {
        guard credentials.realm == realm, let ha1 = lookup(credentials.username) else { return .rejected }
        let parts = credentials.nonce.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, let issued = UInt64(parts[0]) else { return .rejected }
        let expected = Hex.encode(HMAC.sha256(key: secret, data: Array("\(parts[0]):\(realm)".utf8)))
        guard constantTimeEquals(Array(expected.utf8), Array(parts[1].utf8)) else { return .rejected }
        if let qop = credentials.qop, qop != "auth" { return .rejected }
        let response = DigestCredentials.compute(
            algorithm: credentials.algorithm, ha1: ha1, method: method.rawValue, uri: credentials.uri, nonce: credentials.nonce,
            nc: credentials.qop == nil ? nil : credentials.nonceCount, cnonce: credentials.qop == nil ? nil : credentials.cnonce,
            qop: credentials.qop)
        guard constantTimeEquals(Array(response.utf8), Array(credentials.response.utf8)) else { return .rejected }
        let age = now.milliseconds >= issued ? now.milliseconds - issued : UInt64.max
        let lifetime = UInt64(nonceLifetime.components.seconds) * 1000
        return age > lifetime ? .stale : .authorized(username: credentials.username)
    }
}
