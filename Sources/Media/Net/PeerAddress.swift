import Glibc
import Wire

/// A remote UDP transport address held inline, so it can key the 5-tuple map on every packet.
///
/// IPv4-mapped IPv6 addresses (from a dual-stack socket) are stored as IPv4, so a peer is
/// the same key whichever socket family saw it.
public struct PeerAddress: Hashable, Sendable, CustomStringConvertible {
    public var isIPv6: Bool
    /// Upper 64 bits of an IPv6 address; zero for IPv4.
    public var high: UInt64
    /// Lower 64 bits of an IPv6 address, or the IPv4 address (host order) in the low 32 bits.
    public var low: UInt64
    public var port: UInt16

    public init(ipv4: UInt32, port: UInt16) {
        isIPv6 = false
        high = 0
        low = UInt64(ipv4)
        self.port = port
    }

    public init(ipv6High: UInt64, low: UInt64, port: UInt16) {
        if ipv6High == 0, low >> 32 == 0xFFFF {
            self = PeerAddress(ipv4: UInt32(truncatingIfNeeded: low), port: port)
        } else {
            isIPv6 = true
            high = ipv6High
            self.low = low
            self.port = port
        }
    }

    /// Parses a numeric host (`127.0.0.1`, `::1`); no name resolution.
    public init?(host: String, port: UInt16) {
        guard let stun = STUNAddress(host, port: port) else { return nil }
        self.init(stun)
    }

    public init(_ stun: STUNAddress) {
        switch stun.family {
        case .ipv4: self.init(ipv4: UInt32(truncatingIfNeeded: stun.low), port: stun.port)
        case .ipv6: self.init(ipv6High: stun.high, low: stun.low, port: stun.port)
        }
    }

    /// Reads a kernel socket address; nil for families other than IPv4/IPv6.
    package init?(storage: UnsafePointer<sockaddr_storage>) {
        let raw = UnsafeRawPointer(storage)
        switch Int32(storage.pointee.ss_family) {
        case AF_INET:
            // sin_port at 2, sin_addr at 4, both network order.
            self.init(ipv4: Bytes.u32(raw, 4), port: Bytes.u16(raw, 2))
        case AF_INET6:
            // sin6_port at 2, sin6_addr at 8.
            self.init(ipv6High: Bytes.u64(raw, 8), low: Bytes.u64(raw, 16), port: Bytes.u16(raw, 2))
        default:
            return nil
        }
    }

    /// Writes this address for `sendmmsg`; a dual-stack (IPv6) socket needs IPv4 as mapped IPv6.
    package func write(to storage: UnsafeMutablePointer<sockaddr_storage>, ipv6Socket: Bool) {
        let raw = UnsafeMutableRawPointer(storage)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<sockaddr_storage>.size)
        if ipv6Socket {
            storage.pointee.ss_family = sa_family_t(AF_INET6)
            Bytes.put16(raw, 2, port)
            if isIPv6 {
                Bytes.put64(raw, 8, high)
                Bytes.put64(raw, 16, low)
            } else {
                Bytes.put64(raw, 8, 0)
                Bytes.put64(raw, 16, 0xFFFF_0000_0000 | low)
            }
        } else {
            storage.pointee.ss_family = sa_family_t(AF_INET)
            Bytes.put16(raw, 2, port)
            Bytes.put32(raw, 4, UInt32(truncatingIfNeeded: low))
        }
    }

    public var stunAddress: STUNAddress {
        isIPv6 ? .ipv6(high: high, low: low, port: port) : .ipv4(UInt32(truncatingIfNeeded: low), port: port)
    }

    public var host: String { stunAddress.host }
    /// 127.0.0.0/8 or ::1.
    package var isLoopback: Bool { isIPv6 ? high == 0 && low == 1 : low >> 24 == 127 }
    public var description: String { stunAddress.description }
}
