/// Compares two byte strings in time that depends only on their lengths, so a MAC or
/// signature check does not leak how many leading bytes matched.
public func constantTimeEquals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
    guard a.count == b.count else { return false }
    var diff: UInt8 = 0
    for (x, y) in zip(a, b) { diff |= x ^ y }
    return diff == 0
}
