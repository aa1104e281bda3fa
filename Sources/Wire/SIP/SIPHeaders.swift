/// The header fields of a SIP message, in wire order, names in canonical form.
///
/// Lookups are case-insensitive and accept compact forms. Values are stored unfolded, with
/// surrounding whitespace removed, so a message survives parse → serialize → parse unchanged.
public struct SIPHeaders: Hashable, Sendable, Sequence {
    /// Whether `name: value` can go into a message as it is: the name a token (RFC 3261 §25.1), the value
    /// one line of text (no control characters). For headers an application supplies.
    public static func isValid(name: String, value: String) -> Bool {
        SIPSyntax.isToken(name) && !value.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    public struct Field: Hashable, Sendable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = SIPHeaderName.canonical(name)
            self.value = value
        }
    }

    public private(set) var fields: [Field]

    public init(_ fields: [Field] = []) { self.fields = fields }

    public init(_ pairs: KeyValuePairs<String, String>) {
        fields = pairs.map { Field($0.key, $0.value) }
    }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    public var count: Int { fields.count }

    private static func key(_ name: String) -> String { SIPHeaderName.canonical(name).lowercased() }

    /// The first value of `name`.
    public subscript(name: String) -> String? {
        let k = Self.key(name)
        return fields.first { $0.name.lowercased() == k }?.value
    }

    /// Every field value of `name`, in order, without splitting lists.
    public func values(_ name: String) -> [String] {
        let k = Self.key(name)
        return fields.compactMap { $0.name.lowercased() == k ? $0.value : nil }
    }

    /// Every element of a list header, whether sent comma-separated or on several lines.
    public func list(_ name: String) throws(SIPParseError) -> [String] {
        var out: [String] = []
        for v in values(name) {
            for item in try SIPSyntax.splitList(Substring(v)) {
                guard !item.isEmpty else { throw .bad(.invalidHeader, "empty element in \(SIPHeaderName.canonical(name))") }
                out.append(String(item))
            }
        }
        return out
    }

    /// Tokens of a list header such as Supported or Require, lowercased.
    public func tokens(_ name: String) -> [String] {
        ((try? list(name)) ?? []).map { $0.lowercased() }
    }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    public mutating func add(_ name: String, _ value: String) { fields.append(Field(name, value)) }

    /// Inserts before the first field of the same name (a new top Via or Route), or appends.
    public mutating func prepend(_ name: String, _ value: String) {
        let k = Self.key(name)
        if let i = fields.firstIndex(where: { $0.name.lowercased() == k }) {
            fields.insert(Field(name, value), at: i)
        } else {
            fields.append(Field(name, value))
        }
    }

    /// Replaces every field of `name` with one (in the place of the first), or appends it.
    public mutating func set(_ name: String, _ value: String?) {
        let k = Self.key(name)
        guard let first = fields.firstIndex(where: { $0.name.lowercased() == k }) else {
            if let value { fields.append(Field(name, value)) }
            return
        }
        if let value { fields[first].value = value } else { fields.remove(at: first) }
        var i = fields.count - 1
        while i > first {
            if fields[i].name.lowercased() == k { fields.remove(at: i) }
            i -= 1
        }
    }

    public mutating func remove(_ name: String) { set(name, nil) }

    /// Removes the first element of a list header (the top Via or Route), keeping the rest.
    public mutating func removeFirstElement(_ name: String) {
        let k = Self.key(name)
        guard let i = fields.firstIndex(where: { $0.name.lowercased() == k }) else { return }
        let items = (try? SIPSyntax.splitList(Substring(fields[i].value))) ?? []
        if items.count <= 1 {
            fields.remove(at: i)
        } else {
            fields[i].value = items.dropFirst().joined(separator: ", ")
        }
    }
}
