import Wire

/// The `name=value, name="value"` list after `Digest` in WWW-Authenticate, Authorization and
/// their proxy forms (RFC 7616 §3.3–3.4).
struct DigestParameters: Sendable {
    var values: [String: String] = [:]
    var order: [String] = []

    subscript(name: String) -> String? { values[name.lowercased()] }

    static func parse(_ header: String) throws(DigestError) -> DigestParameters {
        var s = Substring(header).drop { $0 == " " || $0 == "\t" }
        guard s.lowercased().hasPrefix("digest"), s.count > 6, s[s.index(s.startIndex, offsetBy: 6)] == " " else {
            throw .notDigest
        }
        s = s.dropFirst(7)
        var out = DigestParameters()
        while true {
            s = s.drop { $0 == " " || $0 == "\t" || $0 == "," }
            if s.isEmpty { break }
            guard let eq = s.firstIndex(of: "=") else { throw .malformed("parameter without value") }
            let name = s[..<eq].trimmingSpaces.lowercased()
            guard !name.isEmpty else { throw .malformed("empty parameter name") }
            s = s[s.index(after: eq)...].drop { $0 == " " || $0 == "\t" }
            var value = ""
            if s.first == "\"" {
                var i = s.index(after: s.startIndex)
                var closed = false
                while i < s.endIndex {
                    let c = s[i]
                    if c == "\\" {
                        i = s.index(after: i)
                        guard i < s.endIndex else { break }
                        value.append(s[i])
                    } else if c == "\"" {
                        closed = true
                        break
                    } else {
                        value.append(c)
                    }
                    i = s.index(after: i)
                }
                guard closed else { throw .malformed("unterminated quoted value") }
                s = s[s.index(after: i)...]
            } else {
                let end = s.firstIndex(of: ",") ?? s.endIndex
                value = String(s[..<end].trimmingSpaces)
                s = s[end...]
            }
            guard out.values.count < 32 else { throw .malformed("too many parameters") }
            if out.values[name] == nil { out.order.append(name) }
            out.values[name] = value
        }
        return out
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var s = self
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return s
    }
}

/// Escapes a value for a quoted-string.
func digestQuote(_ s: String) -> String {
    "\"" + s.replacingAll("\\", "\\\\").replacingAll("\"", "\\\"") + "\""
}

extension String {
    func replacingAll(_ a: Character, _ b: String) -> String {
        var out = ""
        for c in self { if c == a { out += b } else { out.append(c) } }
        return out
    }
}
