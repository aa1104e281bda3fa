import Crypto
import Foundation
import Synchronization
import Store
import Wire

/// A webhook target as the Applications API describes it.
public struct Webhook: Sendable, Equatable {
    public var address: String
    public var httpMethod: String
    public var connectionTimeout: Int?
    public var socketTimeout: Int?

    init?(_ v: JSONValue?) {
        guard let v, let address = v["address"]?.stringValue else { return nil }
        self.address = address
        httpMethod = v["http_method"]?.stringValue ?? "POST"
        // The API documents `connection_timeout`; the official Python SDK sends `connect_timeout`.
        connectionTimeout = v["connection_timeout"]?.intValue ?? v["connect_timeout"]?.intValue
        socketTimeout = v["socket_timeout"]?.intValue
    }
}

/// An application: its key pair's public half, capabilities (voice/rtc/video webhooks) and webhook signing secret.
public struct Application: Sendable, Equatable {
    /// An http or https URL with a host: what a webhook's address must be.
    public static func isWebAddress(_ address: String) -> Bool {
        guard let u = URLComponents(string: address) else { return false }
        return ["http", "https"].contains(u.scheme?.lowercased() ?? "") && u.host?.isEmpty == false
    }

    public var id: String
    public var apiKey: String
    public var name: String
    public var capabilities: JSONValue
    public var publicKey: String
    public var signatureSecret: String
    public var createdAt: Date
    public var updatedAt: Date
    var seq: Int64 = 0

    public var voiceAnswer: Webhook? { Webhook(capabilities["voice"]?["webhooks"]?["answer_url"]) }
    public var voiceFallbackAnswer: Webhook? { Webhook(capabilities["voice"]?["webhooks"]?["fallback_answer_url"]) }
    public var voiceEvent: Webhook? { Webhook(capabilities["voice"]?["webhooks"]?["event_url"]) }
    public var rtcEvent: Webhook? { Webhook(capabilities["rtc"]?["webhooks"]?["event_url"]) }
    public var signedCallbacks: Bool {
        capabilities["voice"]?["signed_callbacks"]?.boolValue ?? capabilities["rtc"]?["signed_callbacks"]?.boolValue ?? false
    }
    public var hasVideo: Bool { capabilities["video"] != nil }
}

/// What a create or update may set.
public struct ApplicationInput: Sendable {
    public var name: String?
    public var publicKey: String?
    public var capabilities: JSONValue?

    public init(name: String? = nil, publicKey: String? = nil, capabilities: JSONValue? = nil) {
        self.name = name
        self.publicKey = publicKey
        self.capabilities = capabilities
    }

    /// Reads the Applications API v2 body.
    public init(json: JSONValue) throws {
        guard case .object = json else { throw PlatformError.invalid("The body must be a JSON object.") }
        if let n = json["name"] {
            guard let s = n.stringValue else { throw PlatformError.invalid("name must be a string.") }
            name = s
        }
        if let k = json["keys"]?["public_key"] {
            guard let s = k.stringValue else { throw PlatformError.invalid("keys.public_key must be a PEM string.") }
            publicKey = s
        }
        capabilities = json["capabilities"]
    }
}

/// Applications of an account, in the store.
public final class Applications: Sendable {
    let db: any SQLStore
    let clock: any WallClock
    let keyCache = PublicKeyCache(capacity: 4096)
    /// Called after an application is deleted (the store unlinks its numbers).
    let deletions = Mutex<[@Sendable () -> Void]>([])

    init(db: any SQLStore, clock: any WallClock) {
        self.db = db
        self.clock = clock
    }

    public func onDelete(_ observer: @escaping @Sendable () -> Void) { deletions.withLock { $0.append(observer) } }

    /// Creates an application; returns it with the private key when one was generated (shown once, never stored).
    public func create(apiKey: String, input: ApplicationInput) throws -> (Application, privateKey: String?) {
        guard let name = input.name?.trimmingCharacters(in: .whitespaces), !name.isEmpty, name.count <= 255 else {
            throw PlatformError.invalid("name is required (1 to 255 characters).")
        }
        let capabilities = try Self.validate(capabilities: input.capabilities ?? .object([:]))
        var privatePEM: String?
        let publicPEM: String
        if let given = input.publicKey {
            guard let key = try? RSAPublicKey(pem: given), key.bits >= 2048 else {
                throw PlatformError.invalid("keys.public_key must be an RSA public key of at least 2048 bits in PEM form.")
            }
            publicPEM = key.pem
        } else {
            let key = try RSAPrivateKey.generate(bits: 2048)
            privatePEM = key.pemPKCS8
            publicPEM = key.publicKey.pem
        }
        let now = clock.now()
        let app = Application(id: UUID4.generate(), apiKey: apiKey, name: name, capabilities: capabilities, publicKey: publicPEM,
                              signatureSecret: SecureRandom.hex(32), createdAt: now, updatedAt: now)
        try db.execute("""
            INSERT INTO applications (id, api_key, name, capabilities, public_key, signature_secret, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(app.id), .text(apiKey), .text(name), .text(JSONText.encode(capabilities)), .text(publicPEM),
                  .text(app.signatureSecret), .int(now.millis), .int(now.millis)])
        return (app, privatePEM)
    }

    public func get(id: String) throws -> Application? {
        try db.queryOne("SELECT * FROM applications WHERE id = ?", [.text(id.lowercased())]).map(Self.application)
    }

    /// The application only if it belongs to `apiKey`: other accounts' applications do not exist for you.
    public func get(id: String, apiKey: String) throws -> Application {
        guard let app = try get(id: id), app.apiKey == apiKey else { throw PlatformError.notFound("application") }
        return app
    }

    /// Numbered pages (`page`, `page_size`) as the Applications API uses.
    public func list(apiKey: String, page: Int, pageSize: Int) throws -> (items: [Application], total: Int) {
        let total = try db.queryOne("SELECT COUNT(*) AS n FROM applications WHERE api_key = ?", [.text(apiKey)])?.int("n") ?? 0
        let rows = try db.query("SELECT * FROM applications WHERE api_key = ? ORDER BY seq LIMIT ? OFFSET ?",
                                [.text(apiKey), .int(Int64(pageSize)), .int(Int64((page - 1) * pageSize))])
        return (rows.map(Self.application), total)
    }

    public func update(id: String, apiKey: String, input: ApplicationInput) throws -> Application {
        var app = try get(id: id, apiKey: apiKey)
        if let name = input.name {
            let n = name.trimmingCharacters(in: .whitespaces)
            guard !n.isEmpty, n.count <= 255 else { throw PlatformError.invalid("name must be 1 to 255 characters.") }
            app.name = n
        }
        if let caps = input.capabilities { app.capabilities = try Self.validate(capabilities: caps) }
        if let pem = input.publicKey {
            guard let key = try? RSAPublicKey(pem: pem), key.bits >= 2048 else {
                throw PlatformError.invalid("keys.public_key must be an RSA public key of at least 2048 bits in PEM form.")
            }
            app.publicKey = key.pem
        }
        app.updatedAt = clock.now()
        try db.execute("UPDATE applications SET name = ?, capabilities = ?, public_key = ?, updated_at = ? WHERE id = ?",
                       [.text(app.name), .text(JSONText.encode(app.capabilities)), .text(app.publicKey), .int(app.updatedAt.millis), .text(app.id)])
        return app
    }

    public func delete(id: String, apiKey: String) throws {
        let app = try get(id: id, apiKey: apiKey)
        try db.execute("DELETE FROM applications WHERE id = ?", [.text(app.id)])
        for o in deletions.withLock({ $0 }) { o() }
    }

    /// The parsed public key of an application, cached across requests.
    public func publicKey(of app: Application) throws -> RSAPublicKey {
        try keyCache.publicKey(id: app.id, pem: app.publicKey)
    }

    /// Checks webhook shapes so a typo fails at create time, not at the first call.
    static func validate(capabilities: JSONValue) throws -> JSONValue {
        guard case .object(let caps) = capabilities else { throw PlatformError.invalid("capabilities must be an object.") }
        for (name, cap) in caps {
            guard ["voice", "rtc", "video", "messages", "vbc", "verify"].contains(name) else {
                throw PlatformError.invalid("Unknown capability '\(name)'.")
            }
            guard case .object = cap else { throw PlatformError.invalid("capabilities.\(name) must be an object.") }
            if case .object(let hooks)? = cap["webhooks"] {
                for (hookName, hook) in hooks {
                    let path = "capabilities.\(name).webhooks.\(hookName)"
                    guard let address = hook["address"]?.stringValue else { throw PlatformError.invalid("\(path).address is required.") }
                    guard Application.isWebAddress(address) else {
                        throw PlatformError.invalid("\(path).address must be an http or https URL.")
                    }
                    if let m = hook["http_method"] {
                        guard let s = m.stringValue, ["GET", "POST"].contains(s.uppercased()) else {
                            throw PlatformError.invalid("\(path).http_method must be GET or POST.")
                        }
                    }
                    for t in ["connection_timeout", "connect_timeout", "socket_timeout"] {
                        if let v = hook[t], v.intValue == nil || v.intValue! < 0 || v.intValue! > 60000 {
                            throw PlatformError.invalid("\(path).\(t) must be milliseconds between 0 and 60000.")
                        }
                    }
                }
            }
        }
        return capabilities
    }

    static func application(_ r: Row) -> Application {
        Application(id: r.string("id") ?? "", apiKey: r.string("api_key") ?? "", name: r.string("name") ?? "",
                    capabilities: JSONText.decode(r.string("capabilities")), publicKey: r.string("public_key") ?? "",
                    signatureSecret: r.string("signature_secret") ?? "",
                    createdAt: Date(millis: r.int64("created_at") ?? 0), updatedAt: Date(millis: r.int64("updated_at") ?? 0),
                    seq: r.int64("seq") ?? 0)
    }
}

/// JSON values stored as text columns.
enum JSONText {
    static func encode(_ v: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(v)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    static func decode(_ s: String?) -> JSONValue {
        // Read on every authenticated request (the application row): JSONParser is several times faster than JSONDecoder.
        guard let s, let v = try? JSONParser.parse(s) else { return .object([:]) }
        return v
    }
}
