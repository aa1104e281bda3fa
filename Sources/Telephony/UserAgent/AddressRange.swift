import Glibc

/// An IPv4 or IPv6 prefix (`192.0.2.0/24`, `2001:db8::/32`, or one address) for source allow-lists.
public struct AddressRange: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]
    public let prefixLength: Int

    public init?(parsing text: String) {
        let parts = text.split(separator: "/", maxSplits: 1)
        guard let first = parts.first, let address = Self.bytes(of: String(first)) else { return nil }
        let maxLength = address.count * 8
        if parts.count == 2 {
            guard let n = Int(parts[1]), (0...maxLength).contains(n) else { return nil }
            prefixLength = n
        } else {
            prefixLength = maxLength
        }
        bytes = address
    }

    public func contains(_ host: String) -> Bool {
        guard let other = Self.bytes(of: host), other.count == bytes.count else { return false }
        var remaining = prefixLength
        for i in 0..<bytes.count where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if bytes[i] & mask != other[i] & mask { return false }
            remaining -= bits
        }
        return true
    }

    public var description: String {
        var text = [CChar](repeating: 0, count: 64)
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        _ = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/\(prefixLength)"
    }

    static func bytes(of host: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}
