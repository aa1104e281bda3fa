/// A value bound to or read from SQLite, one case per storage class
/// (https://sqlite.org/datatype3.html section 2).
public enum SQLValue: Sendable, Equatable, Hashable {
    case null
    case int(Int64)
    case double(Double)
    case text(String)
    case blob([UInt8])

    /// Wraps any convertible value; `nil` becomes `.null`.
    public init<T: SQLValueConvertible>(_ value: T?) {
        self = value?.sqlValue ?? .null
    }

    public var isNull: Bool { self == .null }
}

extension SQLValue: ExpressibleByNilLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByStringLiteral, ExpressibleByBooleanLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    /// Booleans are stored as 0/1 integers, as SQLite itself does.
    public init(booleanLiteral value: Bool) { self = .int(value ? 1 : 0) }
}

/// Swift types that map onto one SQLite storage class.
public protocol SQLValueConvertible {
    var sqlValue: SQLValue { get }
    /// `nil` when the stored value has a different storage class (no silent coercion).
    init?(sqlValue: SQLValue)
}

extension Int64: SQLValueConvertible {
    public var sqlValue: SQLValue { .int(self) }
    public init?(sqlValue: SQLValue) {
        guard case .int(let v) = sqlValue else { return nil }
        self = v
    }
}

extension Int: SQLValueConvertible {
    public var sqlValue: SQLValue { .int(Int64(self)) }
    public init?(sqlValue: SQLValue) {
        guard case .int(let v) = sqlValue, let i = Int(exactly: v) else { return nil }
        self = i
    }
}

extension Int32: SQLValueConvertible {
    public var sqlValue: SQLValue { .int(Int64(self)) }
    public init?(sqlValue: SQLValue) {
        guard case .int(let v) = sqlValue, let i = Int32(exactly: v) else { return nil }
        self = i
    }
}

extension Double: SQLValueConvertible {
    public var sqlValue: SQLValue { .double(self) }
    /// Integers read as doubles too: SQLite stores integral REAL values as INTEGER in some columns.
    public init?(sqlValue: SQLValue) {
        switch sqlValue {
        case .double(let d): self = d
        case .int(let i): self = Double(i)
        default: return nil
        }
    }
}

extension String: SQLValueConvertible {
    public var sqlValue: SQLValue { .text(self) }
    public init?(sqlValue: SQLValue) {
        guard case .text(let s) = sqlValue else { return nil }
        self = s
    }
}

extension Bool: SQLValueConvertible {
    public var sqlValue: SQLValue { .int(self ? 1 : 0) }
    public init?(sqlValue: SQLValue) {
        guard case .int(let v) = sqlValue else { return nil }
        self = v != 0
    }
}

extension Array: SQLValueConvertible where Element == UInt8 {
    public var sqlValue: SQLValue { .blob(self) }
    public init?(sqlValue: SQLValue) {
        guard case .blob(let b) = sqlValue else { return nil }
        self = b
    }
}
