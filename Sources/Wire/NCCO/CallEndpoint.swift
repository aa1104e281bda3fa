/// Where a call leg goes or comes from, as the Voice API and NCCO `connect` name it.
public enum CallEndpoint: Sendable, Hashable {
    /// An E.164 number (digits only, no `+`), with digits to send once answered; `shaken`: a STIR/SHAKEN identity
    /// (RFC 8224 `Identity` header value, the application's signed PASSporT) the INVITE carries.
    case phone(number: String, dtmfAnswer: String?, shaken: String? = nil)
    /// `userToUser`: the `standardHeaders` `User-to-User` value (RFC 7433), sent as that header.
    case sip(uri: String, headers: [String: String], userToUser: String? = nil)
    /// A user of the application, by name.
    case app(user: String)
    /// `authorization`: how the opening handshake's `Authorization` header is set (none without it).
    case websocket(uri: String, contentType: String, headers: [String: String], authorization: WebSocketAuthorization? = nil)

    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case phone, sip, app, websocket
    }

    public var kind: Kind {
        switch self {
        case .phone: .phone
        case .sip: .sip
        case .app: .app
        case .websocket: .websocket
        }
    }

    /// The address alone, as event webhooks show `to` and `from`.
    public var address: String {
        switch self {
        case .phone(let n, _, _): n
        case .sip(let u, _, _): u
        case .app(let u): u
        case .websocket(let u, _, _, _): u
        }
    }

    /// The endpoint as events, stored legs and conversation members show it: a websocket's `authorization`
    /// (a credential) and a phone's `shaken` identity left out.
    public var shown: JSONValue {
        func headerObject(_ h: [String: String]) -> JSONValue { .object(h.mapValues(JSONValue.string)) }
        switch self {
        case .phone(let n, let dtmf, _):
            var o: [String: JSONValue] = ["type": "phone", "number": .string(n)]
            if let dtmf { o["dtmfAnswer"] = .string(dtmf) }
            return .object(o)
        case .sip(let uri, let headers, let userToUser):
            var o: [String: JSONValue] = ["type": "sip", "uri": .string(uri)]
            if !headers.isEmpty { o["headers"] = headerObject(headers) }
            if let userToUser { o["standardHeaders"] = ["User-to-User": .string(userToUser)] }
            return .object(o)
        case .app(let user):
            return ["type": "app", "user": .string(user)]
        case .websocket(let uri, let contentType, let headers, _):
            var o: [String: JSONValue] = ["type": "websocket", "uri": .string(uri), "content-type": .string(contentType)]
            if !headers.isEmpty { o["headers"] = headerObject(headers) }
            return .object(o)
        }
    }

    /// Content types a websocket endpoint may ask for.
    public static let websocketContentTypes: Set<String> = ["audio/l16;rate=8000", "audio/l16;rate=16000", "audio/l16;rate=24000"]

    /// Reads an endpoint object; `field` names it in errors (`to[0]`, `endpoint[0]`).
    public static func parse(_ value: JSONValue, field: String, index: Int? = nil, action: String? = nil) throws(NCCOError) -> CallEndpoint {
        func fail(_ sub: String, _ r: NCCOError.Reason) -> NCCOError { NCCOError(index: index, action: action, field: field + sub, r) }
        guard case .object(let o) = value else { throw fail("", .wrongType(expected: "an object")) }
        guard let typeValue = o["type"] else { throw fail(".type", .missing) }
        guard let type = typeValue.stringValue else { throw fail(".type", .wrongType(expected: "a string")) }
        guard let kind = Kind(rawValue: type) else {
            throw fail(".type", .invalid("must be phone, sip, app or websocket, not '\(type)'"))
        }
        func string(_ key: String, required: Bool) throws(NCCOError) -> String? {
            guard let v = o[key] else {
                if required { throw fail(".\(key)", .missing) }
                return nil
            }
            guard let s = v.stringValue else { throw fail(".\(key)", .wrongType(expected: "a string")) }
            return s
        }
        func headers() throws(NCCOError) -> [String: String] {
            guard let h = o["headers"] else { return [:] }
            guard case .object(let ho) = h else { throw fail(".headers", .wrongType(expected: "an object")) }
            guard ho.count <= 32 else { throw fail(".headers", .outOfRange("at most 32 headers")) }
            var out: [String: String] = [:]
            for (k, v) in ho {
                // Header values are strings on the wire; numbers and booleans are written out.
                switch v {
                case .string(let s): out[k] = s
                case .number(let n): out[k] = JSONValue.number(n).intValue.map(String.init) ?? String(n)
                case .bool(let b): out[k] = b ? "true" : "false"
                default: throw fail(".headers.\(k)", .wrongType(expected: "a string"))
                }
                guard k.utf8.count <= 256, (out[k]?.utf8.count ?? 0) <= 1024 else { throw fail(".headers.\(k)", .outOfRange("at most 1024 bytes")) }
            }
            return out
        }
        /// `standardHeaders`: `{"User-to-User": "…"}` (or `userToUser`, as the Node SDK names it), one line of at most 1024 bytes.
        func userToUser(_ value: JSONValue?) throws(NCCOError) -> String? {
            guard let value else { return nil }
            guard case .object(let fields) = value else { throw fail(".standardHeaders", .wrongType(expected: "an object")) }
            for key in fields.keys where key != "User-to-User" && key != "userToUser" {
                throw fail(".standardHeaders.\(key)", .unsupported)
            }
            guard let uui = fields["User-to-User"] ?? fields["userToUser"] else { return nil }
            guard let text = uui.stringValue else { throw fail(".standardHeaders.User-to-User", .wrongType(expected: "a string")) }
            guard !text.isEmpty, text.utf8.count <= 1024, SIPHeaders.isValid(name: "User-to-User", value: text) else {
                throw fail(".standardHeaders.User-to-User", .invalid("must be one line of text, 1 to 1024 bytes"))
            }
            return text
        }
        let known: Set<String>
        let endpoint: CallEndpoint
        switch kind {
        case .phone:
            known = ["type", "number", "dtmfAnswer", "onAnswer", "shaken"]
            guard let raw = try string("number", required: true) else { throw fail(".number", .missing) }
            guard let number = normalizedNumber(raw) else { throw fail(".number", .invalid("must be an E.164 number (6 to 15 digits)")) }
            let dtmf = try string("dtmfAnswer", required: false)
            if let dtmf, dtmf.isEmpty || dtmf.count > 64 || !dtmf.allSatisfy({ "0123456789*#pP".contains($0) }) {
                throw fail(".dtmfAnswer", .invalid("must be 1 to 64 of 0-9 * # p"))
            }
            if o["onAnswer"] != nil { throw fail(".onAnswer", .unsupported) }
            let shaken = try string("shaken", required: false)
            if let shaken, shaken.isEmpty || shaken.utf8.count > 4096 || !SIPHeaders.isValid(name: "Identity", value: shaken) {
                throw fail(".shaken", .invalid("must be an Identity header value: one line of text, 1 to 4096 bytes"))
            }
            endpoint = .phone(number: number, dtmfAnswer: dtmf, shaken: shaken)
        case .sip:
            known = ["type", "uri", "headers", "standardHeaders"]
            guard let uri = try string("uri", required: true) else { throw fail(".uri", .missing) }
            guard SIPURI.dialable(uri) != nil else {
                throw fail(".uri", .invalid("must be a sip: or sips: URI with a host (transport udp, tcp or tls)"))
            }
            // Sent as `X-<name>: <value>` in the INVITE: a name is a SIP token, a value one line of text.
            let sipHeaders = try headers()
            for (name, value) in sipHeaders where !SIPHeaders.isValid(name: name, value: value) {
                throw fail(".headers.\(name)", .invalid("must be a SIP header name (a token) with one line of text"))
            }
            endpoint = .sip(uri: uri, headers: sipHeaders, userToUser: try userToUser(o["standardHeaders"]))
        case .app:
            known = ["type", "user"]
            guard let user = try string("user", required: true) else { throw fail(".user", .missing) }
            guard !user.isEmpty, user.count <= 200 else { throw fail(".user", .outOfRange("1 to 200 characters")) }
            endpoint = .app(user: user)
        case .websocket:
            known = ["type", "uri", "content-type", "headers", "authorization"]
            guard let uri = try string("uri", required: true) else { throw fail(".uri", .missing) }
            guard uri.hasPrefix("ws://") || uri.hasPrefix("wss://"), isPlainURL(uri) else {
                throw fail(".uri", .invalid("must be a ws:// or wss:// URL"))
            }
            let contentType = try string("content-type", required: false) ?? "audio/l16;rate=16000"
            guard websocketContentTypes.contains(contentType.lowercased().replacingSpaces()) else {
                throw fail(".content-type", .invalid("must be audio/l16;rate=8000, 16000 or 24000"))
            }
            var authorization: WebSocketAuthorization?
            if let a = o["authorization"] {
                do { authorization = try WebSocketAuthorization.parse(a) } catch { throw fail(".authorization\(error.field)", error.reason) }
            }
            endpoint = .websocket(uri: uri, contentType: contentType.lowercased().replacingSpaces(), headers: try headers(),
                                  authorization: authorization)
        }
        for key in o.keys where !known.contains(key) { throw fail(".\(key)", .unknownField) }
        return endpoint
    }

    /// Digits only, 6 to 15 of them, a leading `+` tolerated.
    public static func normalizedNumber(_ s: String) -> String? {
        var digits = Substring(s)
        if digits.hasPrefix("+") { digits = digits.dropFirst() }
        guard (6...15).contains(digits.utf8.count), digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return String(digits)
    }

    /// An absolute URL with no spaces or control characters, at most 2048 bytes.
    public static func isPlainURL(_ s: String) -> Bool {
        let bytes = Array(s.utf8)
        guard bytes.count <= 2048, !bytes.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { return false }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0, bytes.count > colon + 3,
              bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/") else { return false }
        return true
    }
}

/// How a websocket endpoint's opening handshake is authorized, as the Voice API's `authorization`.
public enum WebSocketAuthorization: Sendable, Hashable {
    /// `Authorization: Bearer <JWT>`, the JWT that signs the application's webhooks.
    case vonage
    /// `Authorization: <value>`, sent verbatim.
    case custom(String)

    /// `{type: vonage}` or `{type: custom, value}`: one line of at most 4,096 bytes; errors name the field under
    /// `authorization`.
    static func parse(_ value: JSONValue) throws(FieldError) -> WebSocketAuthorization {
        guard case .object(let o) = value else { throw FieldError("", .wrongType(expected: "an object")) }
        for key in o.keys where key != "type" && key != "value" { throw FieldError(".\(key)", .unknownField) }
        guard let type = o["type"] else { throw FieldError(".type", .missing) }
        switch type.stringValue {
        case "vonage":
            return .vonage
        case "custom":
            guard let v = o["value"] else { throw FieldError(".value", .missing) }
            guard let s = v.stringValue else { throw FieldError(".value", .wrongType(expected: "a string")) }
            let bytes = Array(s.utf8)
            guard !bytes.isEmpty, bytes.count <= 4096, !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
                throw FieldError(".value", .invalid("must be one line of 1 to 4096 bytes"))
            }
            return .custom(s)
        default:
            throw FieldError(".type", .invalid("must be vonage or custom"))
        }
    }

    struct FieldError: Error {
        let field: String
        let reason: NCCOError.Reason
        init(_ field: String, _ reason: NCCOError.Reason) {
            self.field = field
            self.reason = reason
        }
    }
}

extension String {
    fileprivate func replacingSpaces() -> String { String(filter { $0 != " " }) }
}
