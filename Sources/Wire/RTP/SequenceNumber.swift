/// A 16-bit RTP sequence number with wrap-aware ordering (RFC 3550 §A.1, RFC 1982).
///
/// Sequence numbers wrap every 65536 packets, so "newer" means "less than half the
/// range ahead". Deliberately not `Comparable`: that order is not transitive.
public struct SequenceNumber: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    /// Signed steps from `self` forward to `other`, in -32768...32767 except that the
    /// exact half-way point counts as forward when `other` has the larger raw value.
    public func distance(to other: SequenceNumber) -> Int {
        let difference = other.rawValue &- rawValue
        if difference == 0x8000 { return other.rawValue > rawValue ? 32768 : -32768 }
        return Int(Int16(bitPattern: difference))
    }

    /// True when `self` comes after `other` (ties at half range broken by raw value).
    public func isNewer(than other: SequenceNumber) -> Bool { other.distance(to: self) > 0 }

    /// Advances with wrap-around.
    public static func + (lhs: SequenceNumber, rhs: Int) -> SequenceNumber {
        SequenceNumber(lhs.rawValue &+ UInt16(truncatingIfNeeded: rhs))
    }

    /// Steps back with wrap-around.
    public static func - (lhs: SequenceNumber, rhs: Int) -> SequenceNumber {
        SequenceNumber(lhs.rawValue &- UInt16(truncatingIfNeeded: rhs))
    }

    public var description: String { String(rawValue) }
}

/// Extends 16-bit sequence numbers to 64 bits by counting wrap-arounds (RFC 3550 §A.1).
///
/// The first value maps to itself; later values land nearest to the previous one, so
/// reordered packets from before a wrap get their original (smaller) extended number.
public struct SequenceNumberUnwrapper: Sendable {
    private var last: Int64?

    public init() {}

    /// The extended number for `value`; also makes it the reference for the next call.
    public mutating func unwrap(_ value: UInt16) -> Int64 {
        guard let last else {
            self.last = Int64(value)
            return Int64(value)
        }
        let previous = SequenceNumber(UInt16(truncatingIfNeeded: last))
        let extended = last + Int64(previous.distance(to: SequenceNumber(value)))
        self.last = extended
        return extended
    }

    /// The extended number `value` would get, without moving the reference.
    public func peek(_ value: UInt16) -> Int64 {
        var copy = self
        return copy.unwrap(value)
    }
}

/// A 32-bit RTP timestamp with wrap-aware ordering (RFC 3550 §5.1).
public struct RTPTimestamp: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }

    /// Signed ticks from `self` forward to `other`; half range breaks ties by raw value.
    public func distance(to other: RTPTimestamp) -> Int64 {
        let difference = other.rawValue &- rawValue
        if difference == 0x8000_0000 { return other.rawValue > rawValue ? 0x8000_0000 : -0x8000_0000 }
        return Int64(Int32(bitPattern: difference))
    }

    public func isNewer(than other: RTPTimestamp) -> Bool { other.distance(to: self) > 0 }

    public static func + (lhs: RTPTimestamp, rhs: Int64) -> RTPTimestamp {
        RTPTimestamp(lhs.rawValue &+ UInt32(truncatingIfNeeded: rhs))
    }

    public static func - (lhs: RTPTimestamp, rhs: Int64) -> RTPTimestamp {
        RTPTimestamp(lhs.rawValue &- UInt32(truncatingIfNeeded: rhs))
    }

    public var description: String { String(rawValue) }
}

/// Extends 32-bit RTP timestamps to 64 bits by counting wrap-arounds.
public struct RTPTimestampUnwrapper: Sendable {
    private var last: Int64?

    public init() {}

    public mutating func unwrap(_ value: UInt32) -> Int64 {
        guard let last else {
            self.last = Int64(value)
            return Int64(value)
        }
        let previous = RTPTimestamp(UInt32(truncatingIfNeeded: last))
        let extended = last + previous.distance(to: RTPTimestamp(value))
        self.last = extended
        return extended
    }

    public func peek(_ value: UInt32) -> Int64 {
        var copy = self
        return copy.unwrap(value)
    }
}
