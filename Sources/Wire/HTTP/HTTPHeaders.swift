/// An ordered list of header fields with case-insensitive lookup (RFC 9110 section 5).
///
/// Order and the sender's spelling of names are kept because some fields
/// (Set-Cookie, repeated list fields) mean something only in order.
public struct HTTPHeaders: Sendable, Equatable, RandomAccessCollection, ExpressibleByDictionaryLiteral,
    CustomStringConvertible
{
    public typealias Element = (name: String, value: String)

    private var fields: [Element]

    public init() { fields = [] }

    public init(_ fields: [(String, String)]) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    public var startIndex: Int { fields.startIndex }
    public var endIndex: Int { fields.endIndex }
    public subscript(position: Int) -> Element { fields[position] }

    /// The first value of `name`; setting replaces every field of that name (nil removes).
    public subscript(name: String) -> String? {
        get {
            for field in fields where Self.namesEqual(field.name, name) { return field.value }
            return nil
        }
        set {
            if let newValue { replaceOrAdd(name: name, value: newValue) } else { remove(name: name) }
        }
    }

    /// Every value of `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.namesEqual($0.name, name) }.map(\.value)
    }

    public func contains(name: String) -> Bool {
        fields.contains { Self.namesEqual($0.name, name) }
    }

    public mutating func add(name: String, value: String) {
        fields.append((name: name, value: value))
    }

    /// Replaces the first field named `name` in place and drops the others, or appends.
    public mutating func replaceOrAdd(name: String, value: String) {
        if let first = fields.firstIndex(where: { Self.namesEqual($0.name, name) }) {
            fields[first].value = value
            var index = fields.index(after: first)
            while index < fields.endIndex {
                if Self.namesEqual(fields[index].name, name) {
                    fields.remove(at: index)
                } else {
                    index += 1
                }
            }
        } else {
            add(name: name, value: value)
        }
    }

    public mutating func remove(name: String) {
        fields.removeAll { Self.namesEqual($0.name, name) }
    }

    /// The comma-separated list elements of every `name` field, trimmed and lowercased
    /// (RFC 9110 section 5.6.1), for fields like Connection and Transfer-Encoding.
    public func tokens(for name: String) -> [String] {
        var result: [String] = []
        for value in values(for: name) {
            for element in value.split(separator: ",", omittingEmptySubsequences: false) {
                let trimmed = HTTPSyntax.trimmingWhitespace(Substring(element))
                if !trimmed.isEmpty { result.append(HTTPSyntax.asciiLowercased(trimmed)) }
            }
        }
        return result
    }

    /// Whether a list field `name` has `token` as one of its elements, ignoring case.
    public func containsToken(_ token: String, in name: String) -> Bool {
        let wanted = HTTPSyntax.asciiLowercased(Substring(token))
        return tokens(for: name).contains(wanted)
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    public var description: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    /// ASCII case-insensitive comparison; field names are tokens, so no Unicode folding.
    static func namesEqual(_ a: String, _ b: String) -> Bool {
        var left = a.utf8.makeIterator()
        var right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case (let x?, let y?):
                if HTTPSyntax.lower(x) != HTTPSyntax.lower(y) { return false }
            default: return false
            }
        }
    }
}
