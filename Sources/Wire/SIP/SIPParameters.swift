/// An ordered list of `;name[=value]` parameters (RFC 3261 §25.1 `generic-param`, `uri-parameter`).
///
/// Names compare case-insensitively; values keep their wire form (a quoted value keeps its quotes).
public struct SIPParameters: Hashable, Sendable, CustomStringConvertible {
    public struct Parameter: Hashable, Sendable {
        public var name: String
        public var value: String?
        public init(_ name: String, _ value: String?) {
            self.name = name
            self.value = value
        }
    }

    public var items: [Parameter]

    public init(_ items: [Parameter] = []) { self.items = items }

    public var isEmpty: Bool { items.isEmpty }

    /// The value of `name`: nil when absent, `""` for a parameter without a value.
    public subscript(name: String) -> String? {
        get {
            for p in items where p.name.lowercased() == name.lowercased() { return p.value ?? "" }
            return nil
        }
        set {
            if let index = items.firstIndex(where: { $0.name.lowercased() == name.lowercased() }) {
                if let newValue { items[index].value = newValue.isEmpty ? nil : newValue } else { items.remove(at: index) }
            } else if let newValue {
                items.append(Parameter(name, newValue.isEmpty ? nil : newValue))
            }
        }
    }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Adds or replaces a parameter that has no value (`;lr`, `;rport`).
    public mutating func setFlag(_ name: String) {
        if let index = items.firstIndex(where: { $0.name.lowercased() == name.lowercased() }) {
            items[index].value = nil
        } else {
            items.append(Parameter(name, nil))
        }
    }

    /// `;a=b;c` as it goes on the wire.
    public var description: String {
        var out = ""
        for p in items {
            out += ";" + p.name
            if let v = p.value { out += "=" + v }
        }
        return out
    }

    /// Parses the text after the first `;` of a header's parameter list: `a = b ; c ; d="x;y"`.
    /// Whitespace around `;` and `=` is allowed (LWS in `SEMI` and `EQUAL`); empty parameters are not.
    static func parseGeneric(_ text: Substring) throws(SIPParseError) -> SIPParameters {
        var items: [Parameter] = []
        var rest = text
        while true {
            let end = SIPSyntax.firstUnquoted(";", in: rest) ?? rest.endIndex
            let piece = SIPSyntax.trim(rest[rest.startIndex..<end])
            guard !piece.isEmpty else { throw .bad(.invalidHeader, "empty parameter") }
            if let eq = piece.firstIndex(of: "=") {
                let name = SIPSyntax.trim(piece[..<eq])
                let value = SIPSyntax.trim(piece[piece.index(after: eq)...])
                guard SIPSyntax.isToken(name) else { throw .bad(.invalidHeader, "invalid parameter name") }
                if value.first == "\"" {
                    let (_, after) = try SIPSyntax.quotedString(value)
                    guard SIPSyntax.trim(after).isEmpty else { throw .bad(.invalidHeader, "text after quoted parameter") }
                } else {
                    guard !value.isEmpty, value.utf8.allSatisfy({ SIPSyntax.isTokenChar($0) || "[]:".utf8.contains($0) }) else {
                        throw .bad(.invalidHeader, "invalid value of parameter \(name)")
                    }
                }
                items.append(Parameter(String(name), String(value)))
            } else {
                guard SIPSyntax.isToken(piece) else { throw .bad(.invalidHeader, "invalid parameter name") }
                items.append(Parameter(String(piece), nil))
            }
            guard end < rest.endIndex else { break }
            rest = rest[rest.index(after: end)...]
        }
        return SIPParameters(items)
    }
}
