import Crypto
import Foundation
import Wire

/// The STUN and TURN servers clients are told to use (`--ice-servers`), so that the browsers of a relayed video
/// session reach each other through NATs and firewalls. TURN credentials follow the "TURN REST API" convention that
/// coturn (`use-auth-secret`, `static-auth-secret`) and other TURN servers check without a user database: the
/// username is the expiry time in Unix seconds and a name (`<expiry>:<name>`), the credential
/// base64(HMAC-SHA1(secret, username)).
public struct ICEServers: Sendable, Equatable {
    /// `stun:` URIs (RFC 7064).
    public var stun: [String]
    /// `turn:` and `turns:` URIs (RFC 7065).
    public var turn: [String]
    /// The secret the TURN servers share with this one; required with `turn`.
    public var secret: String?
    /// How long a connection's TURN credential is valid.
    public var lifetime: TimeInterval = 86_400

    public static let none = ICEServers(stun: [], turn: [])

    public init(stun: [String], turn: [String], secret: String? = nil) {
        self.stun = stun
        self.turn = turn
        self.secret = secret
    }

    /// A comma-separated list of URIs, and the secret when any is a TURN server's; a clear error otherwise.
    public init(parsing list: String, secret: String?) throws(ICEServerError) {
        var stun: [String] = [], turn: [String] = []
        for raw in list.split(separator: ",") {
            let uri = raw.trimmingCharacters(in: .whitespaces)
            guard !uri.isEmpty else { continue }
            switch try Self.scheme(of: uri) {
            case "stun", "stuns": stun.append(uri)
            default: turn.append(uri)
            }
        }
        if !turn.isEmpty, (secret ?? "").isEmpty { throw ICEServerError("TURN servers need --turn-secret (the TURN server's shared secret)") }
        self.init(stun: stun, turn: turn, secret: secret)
    }

    /// The scheme of `stun:host[:port]`, `turn:host[:port][?transport=udp|tcp]` (and `stuns:`/`turns:`), after
    /// checking the rest: a host, a port 1–65535, no other query.
    static func scheme(of uri: String) throws(ICEServerError) -> String {
        guard let colon = uri.firstIndex(of: ":") else { throw ICEServerError("'\(uri)' is not a stun:, turn: or turns: URI") }
        let scheme = uri[..<colon].lowercased()
        guard ["stun", "stuns", "turn", "turns"].contains(scheme) else {
            throw ICEServerError("'\(uri)' is not a stun:, turn: or turns: URI")
        }
        var rest = uri[uri.index(after: colon)...]
        if let q = rest.firstIndex(of: "?") {
            let query = rest[rest.index(after: q)...].lowercased()
            guard scheme.hasPrefix("turn"), query == "transport=udp" || query == "transport=tcp" else {
                throw ICEServerError("'\(uri)': the only query is ?transport=udp or ?transport=tcp, on a TURN URI")
            }
            rest = rest[..<q]
        }
        var host = Substring(rest)
        var port: Substring? = nil
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw ICEServerError("'\(uri)': unclosed IPv6 address") }
            let after = host[host.index(after: close)...]
            if after.hasPrefix(":") { port = after.dropFirst() } else if !after.isEmpty { throw ICEServerError("'\(uri)': bad host") }
            host = host[..<host.index(after: close)]
        } else if let c = host.lastIndex(of: ":") {
            port = host[host.index(after: c)...]
            host = host[..<c]
        }
        guard !host.isEmpty, !host.contains("/"), !host.contains("@"), !host.contains(where: \.isWhitespace) else {
            throw ICEServerError("'\(uri)': no host")
        }
        if let port { guard let p = Int(port), (1...65_535).contains(p) else { throw ICEServerError("'\(uri)': bad port") } }
        return scheme
    }

    /// `RTCIceServer`s for one client, named `name` in its TURN username: the STUN servers, then the TURN
    /// servers with a credential valid for `lifetime` from `now`. Empty when none are set.
    public func forClient(_ name: String, now: Date = Date()) -> JSONValue {
        var servers: [JSONValue] = []
        if !stun.isEmpty { servers.append(["urls": .array(stun.map(JSONValue.string))]) }
        if !turn.isEmpty, let secret {
            let username = "\(Int(now.timeIntervalSince1970 + lifetime)):\(name)"
            let credential = Base64.encode(HMAC.sha1(key: Array(secret.utf8), data: Array(username.utf8)))
            servers.append(["urls": .array(turn.map(JSONValue.string)), "username": .string(username), "credential": .string(credential)])
        }
        return .array(servers)
    }
}

public struct ICEServerError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
