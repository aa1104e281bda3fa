/// The 96-bit transaction ID of a STUN message (RFC 8489 §5).
///
/// Kept as three words so it hashes and compares without touching the heap; the
/// caller supplies randomness (parsers and builders draw none themselves).
public struct STUNTransactionID: Hashable, Sendable, CustomStringConvertible {
    public var word0: UInt32
    public var word1: UInt32
    public var word2: UInt32

    public init(word0: UInt32, word1: UInt32, word2: UInt32) {
        self.word0 = word0
        self.word1 = word1
        self.word2 = word2
    }

    /// From exactly 12 bytes; nil for any other count.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 12 else { return nil }
        let b = Array(bytes)
        let word = { (i: Int) -> UInt32 in
            UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
        }
        self.init(word0: word(0), word1: word(4), word2: word(8))
    }

    /// Draws a fresh ID from the caller's generator (RFC 8489 §6: cryptographically random).
    public static func random(using generator: inout some RandomNumberGenerator) -> STUNTransactionID {
        STUNTransactionID(word0: generator.next(), word1: generator.next(), word2: generator.next())
    }

    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(12)
        PacketBytes.append32(&out, word0)
        PacketBytes.append32(&out, word1)
        PacketBytes.append32(&out, word2)
        return out
    }

    /// Magic cookie followed by the ID: the 128-bit XOR mask for IPv6 addresses (RFC 8489 §14.2).
    var xorMask: (UInt64, UInt64) {
        (UInt64(STUNMessage.magicCookie) << 32 | UInt64(word0), UInt64(word1) << 32 | UInt64(word2))
    }

    public var description: String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
