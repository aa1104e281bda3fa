import Crypto
import Foundation
import Runtime
import Wire

/// Turns credentials into a `Principal`: Basic (account), or a Bearer RS256 JWT verified with its
/// application's public key. Failures never say whether an application or user exists.
public struct Authenticator: Sendable {
    public static let maxLifetime: TimeInterval = 24 * 3600
    /// Clock skew allowed between the token's signer and this server: a token is accepted until `leeway`
    /// after its `exp`, and a realtime session on it ends then too (one rule for both).
    public static let leeway: TimeInterval = 60

    /// Whether a token with expiry `exp` is no longer accepted at `now`.
    public static func hasExpired(_ exp: Date, at now: Date) -> Bool {
        now.timeIntervalSince1970 >= exp.timeIntervalSince1970 + leeway
    }

    let core: PlatformCore

    public init(core: PlatformCore) { self.core = core }

    public enum Failure: Error, Sendable {
        case missing
        case invalid(String)
        case expired
        /// The token is signed but its ACL is over `ACL.Limits`.
        case oversizedACL(String)
    }

    /// Reads `Authorization`; nil when there is none.
    public func authenticate(authorization: String?) throws(Failure) -> Principal? {
        guard let header = authorization.map(Self.trimmed), !header.isEmpty else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { throw .invalid("malformed Authorization header") }
        switch parts[0].lowercased() {
        case "basic":
            guard let raw = Base64.decode(String(parts[1])).map({ String(decoding: $0, as: UTF8.self) }),
                  let colon = raw.firstIndex(of: ":") else { throw .invalid("malformed Basic credentials") }
            return try account(key: String(raw[..<colon]), secret: String(raw[raw.index(after: colon)...]))
        case "bearer":
            return try token(String(Self.trimmed(parts[1])))
        default:
            throw .invalid("unsupported authorization scheme")
        }
    }

    /// Spaces and tabs off both ends. Foundation's `trimmingCharacters` bridges a kilobyte-long token
    /// through NSString and cost more than checking its RSA signature.
    static func trimmed(_ s: some StringProtocol) -> Substring {
        var sub = Substring(s)
        while let first = sub.utf8.first, first == 0x20 || first == 0x09 { sub = sub.dropFirst() }
        while let last = sub.utf8.last, last == 0x20 || last == 0x09 { sub = sub.dropLast() }
        return sub
    }

    public func account(key: String, secret: String) throws(Failure) -> Principal {
        guard let account = try? core.accounts.find(apiKey: key), account.accepts(secret: secret, at: core.clock.now()) else {
            throw .invalid("invalid api key or secret")
        }
        return .account(account)
    }

    /// Verifies an application or user JWT.
    public func token(_ token: String) throws(Failure) -> Principal {
        let decoded: JWT.Decoded
        do { decoded = try JWT.decode(token) } catch { throw .invalid("malformed token") }
        guard let appID = decoded.claims["application_id"]?.stringValue,
              let app = try? core.applications.get(id: appID),
              let key = try? core.applications.publicKey(of: app) else {
            throw .invalid("invalid token")
        }
        do {
            try JWT.checkSignature(decoded, key: .rs256(key))
            try JWT.checkClaims(decoded.claims, now: core.clock.now().timeIntervalSince1970, leeway: Self.leeway,
                                requireExpiration: true, maxLifetime: Self.maxLifetime)
        } catch .expired {
            throw .expired
        } catch {
            throw .invalid("invalid token")
        }
        let acl = Self.acl(decoded.claims["acl"])
        if let why = acl?.limitViolation { throw .oversizedACL(why) }
        let exp = decoded.claims["exp"]?.doubleValue.map { Date(timeIntervalSince1970: $0) }
        if let sub = decoded.claims["sub"]?.stringValue, !sub.isEmpty {
            guard let user = try? core.users.resolve(sub, applicationID: app.id) else { throw .invalid("invalid token") }
            return .user(app, user, acl: acl, expiresAt: exp)
        }
        return .application(app, acl: acl, expiresAt: exp)
    }

    static func acl(_ v: JSONValue?) -> ACL? {
        guard let paths = v?["paths"] else { return nil }
        switch paths {
        case .object(let o): return ACL(paths: Array(o.keys))
        case .array(let a): return ACL(paths: a.compactMap(\.stringValue))
        default: return ACL(paths: [])
        }
    }
}
