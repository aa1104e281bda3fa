import Crypto
import Wire
import Foundation
import Store

/// SIP device passwords of an application's users, stored only as the digest HA1
/// (`MD5(user:realm:password)`, RFC 2617), the realm being the application ID.
public final class SIPCredentials: Sendable {
    let db: any SQLStore
    let clock: any WallClock
    let users: Users

    init(db: any SQLStore, clock: any WallClock, users: Users) {
        self.db = db
        self.clock = clock
        self.users = users
    }

    /// Sets (or replaces) a user's SIP password; the user is named by ID or name.
    public func setPassword(applicationID: String, user idOrName: String, password: String) throws {
        guard (8...128).contains(password.count) else { throw PlatformError.invalid("password must be 8 to 128 characters.") }
        guard let user = try users.resolve(idOrName, applicationID: applicationID) else { throw PlatformError.notFound("user") }
        let realm = applicationID.lowercased()
        let ha1 = Hex.encode(MD5.hash("\(user.name):\(realm):\(password)"))
        try db.execute("""
            INSERT INTO sip_credentials (user_id, realm, username, ha1, updated_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (user_id) DO UPDATE SET ha1 = excluded.ha1, username = excluded.username, updated_at = excluded.updated_at
            """, [.text(user.id), .text(realm), .text(user.name), .text(ha1), .int(clock.now().millis)])
    }

    public func remove(applicationID: String, user idOrName: String) throws {
        guard let user = try users.resolve(idOrName, applicationID: applicationID) else { throw PlatformError.notFound("user") }
        try db.execute("DELETE FROM sip_credentials WHERE user_id = ?", [.text(user.id)])
    }

    /// The stored HA1 for a device logging in as `username` in `realm`, nil when there is none.
    public func ha1(realm: String, username: String) -> String? {
        (try? db.queryOne("SELECT ha1 FROM sip_credentials WHERE realm = ? AND username = ?", [.text(realm.lowercased()), .text(username)]))??
            .string("ha1")
    }
}
