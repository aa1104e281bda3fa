/// One `<type>=<value>` line of a session description (RFC 8866 §5).
///
/// Descriptions are stored as their lines, so anything this codec does not model
/// (unknown attributes, `b=`, `k=`, vendor extensions) survives a round trip in order.
public struct SDPLine: Hashable, Sendable, CustomStringConvertible {
    /// The single-letter line type (`v`, `o`, `s`, `c`, `t`, `a`, `m`, ...).
    public var type: Character
    public var value: String

    public init(_ type: Character, _ value: String) {
        self.type = type
        self.value = value
    }

    /// An `a=` line.
    public static func attribute(_ name: String, _ value: String? = nil) -> SDPLine {
        SDPLine("a", value.map { "\(name):\($0)" } ?? name)
    }

    /// The attribute name and value when this is an `a=` line (`a=name:value` or `a=flag`).
    public var attribute: SDPAttribute? {
        guard type == "a" else { return nil }
        let utf8 = value.utf8
        if let colon = utf8.firstIndex(of: UInt8(ascii: ":")) {
            return SDPAttribute(String(value[..<colon]), String(value[utf8.index(after: colon)...]))
        }
        return SDPAttribute(value, nil)
    }

    /// The value of `a=name:value` (`""` for the flag `a=name`) when this line is that attribute, else nil.
    ///
    /// Compares bytes in place, so scanning a section for one attribute builds no strings for the
    /// lines that are not it.
    public func attributeValue(named name: String) -> String? {
        guard type == "a" else { return nil }
        let utf8 = value.utf8, key = name.utf8
        guard utf8.starts(with: key) else { return nil }
        let end = utf8.index(utf8.startIndex, offsetBy: key.count)
        if end == utf8.endIndex { return "" }
        guard utf8[end] == UInt8(ascii: ":") else { return nil }
        return String(value[utf8.index(after: end)...])
    }

    public var description: String { "\(type)=\(value)" }
}

/// A decoded `a=` line: property attributes have no value (`a=rtcp-mux`).
public struct SDPAttribute: Hashable, Sendable {
    public var name: String
    public var value: String?

    public init(_ name: String, _ value: String? = nil) {
        self.name = name
        self.value = value
    }

    public var line: SDPLine { .attribute(name, value) }
}

/// Attribute access shared by the session level and each media section.
public protocol SDPLineContainer {
    var lines: [SDPLine] { get set }
}

extension SDPLineContainer {
    public var attributes: [SDPAttribute] { lines.compactMap(\.attribute) }

    /// Value of the first `a=name[:value]`; `""` for a property attribute, nil when absent.
    public func attributeValue(_ name: String) -> String? {
        for line in lines {
            if let value = line.attributeValue(named: name) { return value }
        }
        return nil
    }

    /// Values of every `a=name:value`, in order.
    public func attributeValues(_ name: String) -> [String] {
        lines.compactMap { $0.attributeValue(named: name) }
    }

    public func hasAttribute(_ name: String) -> Bool { attributeValue(name) != nil }

    public mutating func addAttribute(_ name: String, _ value: String? = nil) {
        lines.append(.attribute(name, value))
    }

    public mutating func removeAttributes(named name: String) {
        lines.removeAll { $0.attributeValue(named: name) != nil }
    }

    /// Replaces the first `a=name` in place (dropping later ones), or appends; nil removes.
    public mutating func setAttribute(_ name: String, _ value: String?, present: Bool = true) {
        guard present else { removeAttributes(named: name); return }
        if let index = lines.firstIndex(where: { $0.attributeValue(named: name) != nil }) {
            lines[index] = .attribute(name, value)
            var i = lines.count - 1
            while i > index {
                if lines[i].attributeValue(named: name) != nil { lines.remove(at: i) }
                i -= 1
            }
        } else {
            lines.append(.attribute(name, value))
        }
    }

    /// Sets or clears a property attribute such as `a=rtcp-mux`.
    public mutating func setFlag(_ name: String, _ on: Bool) {
        if on { if !hasAttribute(name) { addAttribute(name) } } else { removeAttributes(named: name) }
    }

    // MARK: ICE and DTLS (RFC 8839 §5, RFC 8122 §5, RFC 4145 §4) — valid at either level.

    public var iceUfrag: String? {
        get { attributeValue("ice-ufrag") }
        set { setAttribute("ice-ufrag", newValue, present: newValue != nil) }
    }

    public var icePwd: String? {
        get { attributeValue("ice-pwd") }
        set { setAttribute("ice-pwd", newValue, present: newValue != nil) }
    }

    /// `a=ice-options:trickle renomination` → ["trickle", "renomination"].
    public var iceOptions: [String] {
        attributeValues("ice-options").flatMap { $0.split(separator: " ").map(String.init) }
    }

    public var fingerprints: [SDPFingerprint] { attributeValues("fingerprint").compactMap(SDPFingerprint.init) }

    public var fingerprint: SDPFingerprint? {
        get { fingerprints.first }
        set { setAttribute("fingerprint", newValue?.attributeValue, present: newValue != nil) }
    }

    public var setup: SDPSetupRole? {
        get { attributeValue("setup").flatMap(SDPSetupRole.init(rawValue:)) }
        set { setAttribute("setup", newValue?.rawValue, present: newValue != nil) }
    }

    /// RFC 8285 §6: one-byte and two-byte extensions may be mixed in one packet.
    public var extmapAllowMixed: Bool {
        get { hasAttribute("extmap-allow-mixed") }
        set { setFlag("extmap-allow-mixed", newValue) }
    }

    public var extMaps: [SDPExtMap] { attributeValues("extmap").compactMap(SDPExtMap.init) }
}
