import Crypto
import Foundation
import Glibc
import Store

/// The account that owns applications and numbers: an 8-hex-digit api key and a secret.
public struct Account: Sendable, Equatable {
    public var apiKey: String
    public var apiSecret: String
    /// The secret before the last rotation, still accepted until `previousSecretExpiresAt`.
    public var previousSecret: String?
    public var previousSecretExpiresAt: Date?

    /// Whether `secret` is the current one, or the previous one within its grace period.
    public func accepts(secret: String, at now: Date) -> Bool {
        if constantTimeEquals(Array(secret.utf8), Array(apiSecret.utf8)) { return true }
        if let old = previousSecret, let until = previousSecretExpiresAt, now < until {
            return constantTimeEquals(Array(secret.utf8), Array(old.utf8))
        }
        return false
    }
}

/// Creates, loads and rotates the server's account; `<data>/account.json` (mode 0600) mirrors the store.
public final class Accounts: Sendable {
    /// How long the previous secret keeps working after a rotation.
    public static let rotationGrace: TimeInterval = 24 * 3600

    let db: any SQLStore
    let clock: any WallClock
    let dataDirectory: String

    init(db: any SQLStore, clock: any WallClock, dataDirectory: String) {
        self.db = db
        self.clock = clock
        self.dataDirectory = dataDirectory
    }

    public var accountFile: String { dataDirectory + "/account.json" }

    /// The primary account, created on first use. `created` is true when it was made now.
    ///
    /// The credentials file is written (durably) before the row commits, and rewritten from the store
    /// whenever it is missing or stale, so a crash at any point of a first start leaves a server whose
    /// `account.json` holds the credentials the store accepts.
    public func ensurePrimary() throws -> (Account, created: Bool) {
        if let a = try primary() {
            var stored = a
            stored.previousSecretExpiresAt = a.previousSecretExpiresAt.map { Date(millis: $0.millis) }
            if (try? readFile()) != stored { try writeFile(a) }
            return (a, false)
        }
        let account = Account(apiKey: SecureRandom.hex(4), apiSecret: Self.makeSecret())
        try writeFile(account)
        try db.execute("INSERT INTO accounts (api_key, api_secret, created_at) VALUES (?, ?, ?)",
                       [.text(account.apiKey), .text(account.apiSecret), .int(clock.now().millis)])
        return (account, true)
    }

    public func primary() throws -> Account? {
        try db.queryOne("SELECT * FROM accounts ORDER BY created_at LIMIT 1").map(Self.account)
    }

    public func find(apiKey: String) throws -> Account? {
        try db.queryOne("SELECT * FROM accounts WHERE api_key = ?", [.text(apiKey)]).map(Self.account)
    }

    /// Replaces the secret; the old one stays valid for `rotationGrace`.
    public func rotateSecret(apiKey: String) throws -> Account {
        guard var account = try find(apiKey: apiKey) else { throw PlatformError.notFound("account") }
        account.previousSecret = account.apiSecret
        account.previousSecretExpiresAt = clock.now().addingTimeInterval(Self.rotationGrace)
        account.apiSecret = Self.makeSecret()
        try db.execute("UPDATE accounts SET api_secret = ?, previous_secret = ?, previous_secret_expires_at = ? WHERE api_key = ?",
                       [.text(account.apiSecret), .text(account.previousSecret!), .int(account.previousSecretExpiresAt!.millis), .text(apiKey)])
        try writeFile(account)
        return account
    }

    /// 44 characters from an unambiguous alphabet of 57: 256 bits. The secret is also the HS256 key of the
    /// video API's `X-OPENTOK-AUTH` tokens, and RFC 7518 §3.2 asks for a key at least as long as the hash
    /// (SDKs such as PyJWT warn on every token signed with less). Bytes that would favour the first letters
    /// (228 and above) are drawn again.
    static func makeSecret() -> String {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789")
        let unbiased = 256 - 256 % alphabet.count
        var secret = ""
        while secret.count < 44 {
            for byte in SecureRandom.bytes(64) where Int(byte) < unbiased && secret.count < 44 {
                secret.append(alphabet[Int(byte) % alphabet.count])
            }
        }
        return secret
    }

    /// The account as `account.json` holds it; nil when there is no file.
    func readFile() throws -> Account? {
        guard let data = FileManager.default.contents(atPath: accountFile) else { return nil }
        guard let o = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let key = o["api_key"] as? String, let secret = o["api_secret"] as? String else { return nil }
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let expires = (o["previous_secret_expires_at"] as? String).flatMap { format.date(from: $0) }
        return Account(apiKey: key, apiSecret: secret, previousSecret: o["previous_secret"] as? String,
                       previousSecretExpiresAt: expires.map { Date(millis: $0.millis) })
    }

    /// Replaces `account.json` durably: a temporary file written and fsynced, renamed over the old one
    /// (readers see the old file or the new one, never half of it), then the directory fsynced so the
    /// rename itself survives a crash.
    private func writeFile(_ a: Account) throws {
        var obj: [String: Any] = ["api_key": a.apiKey, "api_secret": a.apiSecret]
        if let p = a.previousSecret, let e = a.previousSecretExpiresAt {
            obj["previous_secret"] = p
            obj["previous_secret_expires_at"] = e.iso8601
        }
        let data = try JSONSerialization.data(withJSONObject: obj, options: [.prettyPrinted, .sortedKeys])
        let tmp = accountFile + ".tmp"
        // A temp file left by a crash may carry other permissions; a fresh one is created 0600.
        unlink(tmp)
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PlatformError.invalid("cannot write \(tmp): \(String(cString: strerror(errno)))") }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == data.count, synced else {
            unlink(tmp)
            throw PlatformError.invalid("cannot write \(tmp): \(String(cString: strerror(errno)))")
        }
        guard rename(tmp, accountFile) == 0 else { throw PlatformError.invalid("cannot write \(accountFile)") }
        let dir = open(dataDirectory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dir >= 0 {
            fsync(dir)
            close(dir)
        }
    }

    static func account(_ r: Row) -> Account {
        Account(apiKey: r.string("api_key") ?? "", apiSecret: r.string("api_secret") ?? "",
                previousSecret: r.string("previous_secret"),
                previousSecretExpiresAt: r.int64("previous_secret_expires_at").map(Date.init(millis:)))
    }
}
