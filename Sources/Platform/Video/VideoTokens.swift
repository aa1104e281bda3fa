import Crypto
import Foundation
import Wire

/// What a video client token grants.
public struct VideoGrant: Sendable, Equatable {
    public enum Role: String, Sendable, CaseIterable {
        case subscriber, publisher, publisheronly, moderator
        public var canPublish: Bool { self != .subscriber }
        public var canSubscribe: Bool { self != .publisheronly }
        public var canModerate: Bool { self == .moderator }
    }

    public var sessionID: String
    public var role: Role
    public var connectionData: String?
    public var expiresAt: Date
    /// The account's api key or the application id that signed the token: the project it acts for,
    /// which must own the session (`VideoSessions.get(id:project:)`).
    public var issuer: String
    /// `initial_layout_class_list`: the layout classes of the streams this connection publishes.
    public var initialLayoutClassList: [String] = []

    /// The longest list of layout classes, written space-separated, a token or a stream may carry (the SDKs' own limit).
    public static let layoutClassListLimit = 1000
}

public enum VideoTokenError: Error, Sendable, Equatable {
    case invalid(String)
    case expired
}

/// Reads the three token formats video clients present: Vonage RS256 JWTs, OpenTok HS256 JWTs and
/// OpenTok `T1==` tokens.
public struct VideoTokenVerifier: Sendable {
    public static let maxLifetime: TimeInterval = 30 * 24 * 3600
    let core: PlatformCore

    public init(core: PlatformCore) { self.core = core }

    public func verify(_ token: String, now: Date = Date()) throws(VideoTokenError) -> VideoGrant {
        if token.hasPrefix("T1==") { return try verifyT1(token, now: now) }
        let decoded: JWT.Decoded
        do { decoded = try JWT.decode(token) } catch { throw .invalid("The token is not a JWT or a T1 token.") }
        let claims = decoded.claims
        let key: JWT.VerificationKey
        let issuer: String
        if let appID = claims["application_id"]?.stringValue {
            guard let app = try? core.applications.get(id: appID), let pub = try? core.applications.publicKey(of: app) else {
                throw .invalid("The token's application is unknown.")
            }
            key = .rs256(pub)
            issuer = app.id
        } else if let iss = claims["iss"]?.stringValue, claims["ist"]?.stringValue == "project" {
            guard let account = try? core.accounts.find(apiKey: iss) else { throw .invalid("The token's api key is unknown.") }
            key = .hs256(Array(account.apiSecret.utf8))
            issuer = iss
        } else {
            throw .invalid("The token names no application_id or iss.")
        }
        do {
            try JWT.checkSignature(decoded, key: key)
            try JWT.checkClaims(claims, now: now.timeIntervalSince1970, leeway: 60, requireExpiration: true, maxLifetime: Self.maxLifetime)
        } catch .expired {
            throw .expired
        } catch {
            throw .invalid("The token's signature or times are not valid.")
        }
        if let scope = claims["scope"]?.stringValue, scope != "session.connect" { throw .invalid("The token's scope is not session.connect.") }
        guard let sid = claims["session_id"]?.stringValue else { throw .invalid("The token has no session_id.") }
        let role = VideoGrant.Role(rawValue: claims["role"]?.stringValue ?? "publisher") ?? .publisher
        let exp = Date(timeIntervalSince1970: claims["exp"]?.doubleValue ?? 0)
        // The OpenTok SDKs send the classes space-separated, the Vonage SDKs as an array.
        let classes: [String]
        switch claims["initial_layout_class_list"] {
        case .string(let list)?: classes = try Self.layoutClasses(list)
        case .array(let items)?:
            let names = items.compactMap(\.stringValue)
            guard names.count == items.count else { throw .invalid("The token's initial_layout_class_list holds a value that is not a string.") }
            classes = try Self.layoutClasses(names.joined(separator: " "))
        case nil, .null?: classes = []
        default: throw .invalid("The token's initial_layout_class_list is not a string or an array of strings.")
        }
        return VideoGrant(sessionID: sid, role: role, connectionData: claims["connection_data"]?.stringValue, expiresAt: exp, issuer: issuer,
                          initialLayoutClassList: classes)
    }

    /// Layout classes written as the SDKs write them in a token: space-separated, at most 1,000 characters.
    static func layoutClasses(_ list: String) throws(VideoTokenError) -> [String] {
        guard list.count <= VideoGrant.layoutClassListLimit else { throw .invalid("The token's initial_layout_class_list is longer than \(VideoGrant.layoutClassListLimit) characters.") }
        return list.split(whereSeparator: \.isWhitespace).map(String.init)
    }

    /// `T1==` + base64("partner_id=KEY&sig=HEX:" + data), sig = HMAC-SHA1(data, api_secret).
    func verifyT1(_ token: String, now: Date) throws(VideoTokenError) -> VideoGrant {
        guard let raw = Base64.decode(String(token.dropFirst(4))).map({ String(decoding: $0, as: UTF8.self) }),
              let colon = raw.firstIndex(of: ":") else { throw .invalid("The T1 token is malformed.") }
        let head = FormDecodingLite.decode(String(raw[..<colon]))
        let data = String(raw[raw.index(after: colon)...])
        guard let key = head["partner_id"], let sig = head["sig"], let account = try? core.accounts.find(apiKey: key) else {
            throw .invalid("The T1 token's partner is unknown.")
        }
        let secrets = [account.apiSecret] + (account.previousSecret.map { [$0] } ?? [])
        let valid = secrets.contains { secret in
            constantTimeEquals(Array(Hex.encode(HMAC.sha1(key: Array(secret.utf8), data: Array(data.utf8))).utf8), Array(sig.lowercased().utf8))
        }
        guard valid else { throw .invalid("The T1 token's signature is not valid.") }
        let fields = FormDecodingLite.decode(data)
        guard let sid = fields["session_id"], let expire = fields["expire_time"].flatMap(Double.init) else {
            throw .invalid("The T1 token lacks session_id or expire_time.")
        }
        if let created = fields["create_time"].flatMap(Double.init), expire - created > Self.maxLifetime + 60 {
            throw .invalid("The T1 token lives longer than 30 days.")
        }
        guard now.timeIntervalSince1970 < expire else { throw .expired }
        let role = VideoGrant.Role(rawValue: fields["role"] ?? "publisher") ?? .publisher
        return VideoGrant(sessionID: sid, role: role, connectionData: fields["connection_data"], expiresAt: Date(timeIntervalSince1970: expire), issuer: key,
                          initialLayoutClassList: try Self.layoutClasses(fields["initial_layout_class_list"] ?? ""))
    }

    /// Makes a token the way the SDKs do: RS256 for an application, T1 for an api key/secret.
    public static func makeT1(apiKey: String, apiSecret: String, sessionID: String, role: VideoGrant.Role, data: String?, ttl: TimeInterval,
                              layoutClasses: [String] = [], now: Date = Date()) -> String {
        let nowSec = Int(now.timeIntervalSince1970)
        var fields = [("session_id", sessionID), ("create_time", String(nowSec)), ("expire_time", String(nowSec + Int(ttl))),
                      ("role", role.rawValue), ("nonce", String(Int.random(in: 0..<1_000_000))),
                      ("initial_layout_class_list", layoutClasses.joined(separator: " "))]
        if let data { fields.append(("connection_data", data)) }
        let body = FormDecodingLite.encode(fields)
        let sig = Hex.encode(HMAC.sha1(key: Array(apiSecret.utf8), data: Array(body.utf8)))
        return "T1==" + Base64.encode(Array("partner_id=\(apiKey)&sig=\(sig):\(body)".utf8))
    }
}

/// Form encoding without Runtime (Platform's token code is used by the CLI offline too).
enum FormDecodingLite {
    static func decode(_ text: String) -> [String: String] {
        var out: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let k = String(kv[0]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(kv[0])
            let v = kv.count > 1 ? (String(kv[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(kv[1])) : ""
            out[k] = v
        }
        return out
    }

    static func encode(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.map { ($0.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0) + "=" + ($1.addingPercentEncoding(withAllowedCharacters: allowed) ?? $1) }
            .joined(separator: "&")
    }
}
