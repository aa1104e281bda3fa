/// Column names of one result set, shared by all its rows.
final class ColumnIndex: Sendable {
    let names: [String]
    let positions: [String: Int]

    init(names: [String]) {
        self.names = names
        var positions: [String: Int] = [:]
        // The first column wins when a query returns two with the same name.
        for (i, name) in names.enumerated() where positions[name] == nil { positions[name] = i }
        self.positions = positions
    }
}

/// One result row, read by column name or position.
public struct Row: Sendable {
    let columns: ColumnIndex
    public let values: [SQLValue]

    init(columns: ColumnIndex, values: [SQLValue]) {
        self.columns = columns
        self.values = values
    }

    public var columnNames: [String] { columns.names }

    /// The raw value of column `name`; `nil` if the query has no such column.
    public subscript(name: String) -> SQLValue? {
        guard let i = columns.positions[name] else { return nil }
        return values[i]
    }

    public subscript(index: Int) -> SQLValue { values[index] }

    /// Typed access: `row["name"] as String?`. `nil` for NULL, a missing column, or another storage class.
    public subscript<T: SQLValueConvertible>(name: String) -> T? {
        guard let value: SQLValue = self[name] else { return nil }
        return T(sqlValue: value)
    }

    public func int(_ name: String) -> Int? { self[name] }
    public func int64(_ name: String) -> Int64? { self[name] }
    public func double(_ name: String) -> Double? { self[name] }
    public func string(_ name: String) -> String? { self[name] }
    public func bool(_ name: String) -> Bool? { self[name] }
    public func blob(_ name: String) -> [UInt8]? { self[name] }
    public func isNull(_ name: String) -> Bool { self[name] == SQLValue.null }
}

extension Row: Equatable {
    public static func == (lhs: Row, rhs: Row) -> Bool {
        lhs.values == rhs.values && lhs.columns.names == rhs.columns.names
    }
}
