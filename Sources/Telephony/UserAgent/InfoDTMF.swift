/// A key sent in a SIP INFO request, as PBXes and SBCs send them beside (or instead of) RFC 4733 events:
/// `application/dtmf-relay` (`Signal=5` and `Duration=160` lines; `*` and `#` also as `10` and `11`, some
/// gateways' way) or `application/dtmf` (the key alone). Pure: the request's content type and body in, the key out.
public enum InfoDTMF: Equatable, Sendable {
    /// One key: 0-9, *, # or A-D.
    case digit(Character)
    /// A DTMF body without a key this side can read (answered 400).
    case malformed
    /// Not DTMF (another INFO package, or none): nothing to do (answered 200).
    case other

    public static func read(contentType: String?, body: [UInt8]) -> InfoDTMF {
        guard body.count <= 1_024 else { return contentType == "application/dtmf-relay" || contentType == "application/dtmf" ? .malformed : .other }
        let text = String(decoding: body, as: UTF8.self)
        switch contentType {
        case "application/dtmf-relay":
            for line in text.split(whereSeparator: \.isNewline) {
                let parts = line.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, trimmed(parts[0]).lowercased() == "signal" else { continue }
                return key(trimmed(parts[1])).map(InfoDTMF.digit) ?? .malformed
            }
            return .malformed
        case "application/dtmf":
            return key(trimmed(Substring(text))).map(InfoDTMF.digit) ?? .malformed
        default:
            return .other
        }
    }

    static func trimmed(_ s: Substring) -> String { String(s.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()) }

    /// `5`, `*`, `#`, `a`…`d` (as capitals), or `10` / `11` for `*` / `#`.
    static func key(_ value: String) -> Character? {
        switch value {
        case "10": return "*"
        case "11": return "#"
        default:
            guard value.count == 1, let c = value.uppercased().first, "0123456789*#ABCD".contains(c) else { return nil }
            return c
        }
    }
}
