import Synchronization

/// Parsed RSA public keys shared across requests, so each verification does not
/// re-parse PEM. Entries are keyed by an ID (an application ID, or the PEM itself)
/// and remember their PEM: a rotated key under the same ID is re-parsed.
public final class PublicKeyCache: Sendable {
    private struct Entry {
        var pem: String
        var key: RSAPublicKey
        var lastUse: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var clock: UInt64 = 0
    }

    private let state = Mutex(State())
    public let capacity: Int

    public init(capacity: Int = 1024) {
        self.capacity = max(1, capacity)
    }

    /// The key for `pem`, parsed once.
    public func publicKey(pem: String) throws(RSAKeyError) -> RSAPublicKey {
        try publicKey(id: pem, pem: pem)
    }

    /// The key stored under `id`, re-parsed if `pem` changed since it was cached.
    public func publicKey(id: String, pem: String) throws(RSAKeyError) -> RSAPublicKey {
        let hit: RSAPublicKey? = state.withLock { s in
            s.clock &+= 1
            guard var entry = s.entries[id], entry.pem == pem else { return nil }
            entry.lastUse = s.clock
            s.entries[id] = entry
            return entry.key
        }
        if let hit { return hit }
        // Parse outside the lock: it is the slow part and needs no shared state.
        let key = try RSAPublicKey(pem: pem)
        state.withLock { s in
            s.clock &+= 1
            if s.entries[id] == nil, s.entries.count >= capacity,
               let oldest = s.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
                s.entries.removeValue(forKey: oldest)
            }
            s.entries[id] = Entry(pem: pem, key: key, lastUse: s.clock)
        }
        return key
    }

    /// Forgets the key under `id` (for example when an application is deleted).
    public func remove(id: String) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    public var count: Int { state.withLock { $0.entries.count } }
}
