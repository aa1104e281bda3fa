/// A session description (RFC 8866), as exchanged in WebRTC offers and answers (RFC 8829).
///
/// ```
/// v=0
/// o=- 4611731400430051336 2 IN IP4 127.0.0.1
/// s=-
/// t=0 0
/// a=group:BUNDLE 0 1
/// a=...                      session-level attributes
/// m=audio 9 UDP/TLS/RTP/SAVPF 111 0 8
/// c=IN IP4 0.0.0.0
/// a=...                      media-level attributes, up to the next m=
/// ```
///
/// Kept as ordered lines (session level, then one block per `m=`) with typed
/// accessors on top, so unknown lines survive parse → serialize unchanged.
/// Accepts CRLF or LF line endings; always emits CRLF (RFC 8866 §5).
public struct SessionDescription: Hashable, Sendable, SDPLineContainer {
    /// Session-level lines, `v=` first.
    public var lines: [SDPLine]
    public var media: [MediaDescription]

    public init(lines: [SDPLine], media: [MediaDescription] = []) {
        self.lines = lines
        self.media = media
    }

    /// A minimal session header: `v=0`, `o=`, `s=-`, `t=0 0`.
    public init(origin: SDPOrigin, sessionName: String = "-") {
        self.init(lines: [SDPLine("v", "0"), SDPLine("o", origin.value), SDPLine("s", sessionName), SDPLine("t", "0 0")])
    }

    public static func parse(_ text: String, limits: SDPLimits = .default) throws(SDPError) -> SessionDescription {
        let utf8 = text.utf8
        guard utf8.count <= limits.maxBytes else { throw .tooLarge(bytes: utf8.count, limit: limits.maxBytes) }
        var session: [SDPLine] = []
        var media: [MediaDescription] = []
        var lineNumber = 0
        var lineCount = 0
        var sawVersion = false
        for rawLine in utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            var line = rawLine
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            if line.isEmpty { continue }
            lineCount += 1
            guard lineCount <= limits.maxLines else { throw .tooManyLines(limit: limits.maxLines) }
            guard line.count <= limits.maxLineLength else {
                throw .lineTooLong(line: lineNumber, length: line.count, limit: limits.maxLineLength)
            }
            let first = line[line.startIndex]
            let second = line.index(after: line.startIndex)
            guard line.count >= 2, line[second] == UInt8(ascii: "="),
                  (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first | 0x20) else {
                throw .malformedLine(line: lineNumber, text: String(decoding: line.prefix(80), as: UTF8.self))
            }
            let type = Character(Unicode.Scalar(first))
            let value = String(decoding: line[line.index(after: second)...], as: UTF8.self)
            if !sawVersion {
                guard type == "v" else { throw .missingVersion }
                sawVersion = true
            }
            if type == "m" {
                guard media.count < limits.maxMediaSections else {
                    throw .tooManyMediaSections(limit: limits.maxMediaSections)
                }
                guard let section = MediaDescription(mediaLine: value) else {
                    throw .invalidMediaLine(line: lineNumber, text: String(value.prefix(80)))
                }
                media.append(section)
            } else if media.isEmpty {
                session.append(SDPLine(type, value))
            } else {
                media[media.count - 1].lines.append(SDPLine(type, value))
            }
        }
        guard sawVersion else { throw .missingVersion }
        return SessionDescription(lines: session, media: media)
    }

    public static func parse(_ bytes: [UInt8], limits: SDPLimits = .default) throws(SDPError) -> SessionDescription {
        guard bytes.count <= limits.maxBytes else { throw .tooLarge(bytes: bytes.count, limit: limits.maxBytes) }
        return try parse(String(decoding: bytes, as: UTF8.self), limits: limits)
    }

    /// The description with CRLF line endings.
    public func serialize() -> String {
        var out = ""
        out.reserveCapacity(4096)
        for line in lines { out += "\(line.type)=\(line.value)\r\n" }
        for section in media {
            out += "m=\(section.mediaLine)\r\n"
            for line in section.lines { out += "\(line.type)=\(line.value)\r\n" }
        }
        return out
    }

    // MARK: Typed accessors

    public var origin: SDPOrigin? {
        get { lines.first { $0.type == "o" }.flatMap { SDPOrigin($0.value) } }
        set { setLine("o", newValue?.value, after: "v") }
    }

    public var sessionName: String? {
        get { lines.first { $0.type == "s" }?.value }
        set { setLine("s", newValue, after: "o") }
    }

    public var timing: SDPTiming? {
        get { lines.first { $0.type == "t" }.flatMap { SDPTiming($0.value) } }
        set { setLine("t", newValue?.value, after: "s") }
    }

    public var groups: [SDPGroup] { attributeValues("group").compactMap(SDPGroup.init) }

    /// MIDs of the first `a=group:BUNDLE` (RFC 8843), nil when not bundling.
    public var bundleMids: [String]? { groups.first { $0.semantics == "BUNDLE" }?.identifiers }

    /// RFC 8445 §2.5: the peer only answers checks; it never sends its own.
    public var iceLite: Bool {
        get { hasAttribute("ice-lite") }
        set { setFlag("ice-lite", newValue) }
    }

    /// The media section with `a=mid:<mid>`.
    public func media(mid: String) -> MediaDescription? { media.first { $0.mid == mid } }

    /// Replaces the first line of `type`, or inserts it after the first line of `after`.
    private mutating func setLine(_ type: Character, _ value: String?, after: Character) {
        if let index = lines.firstIndex(where: { $0.type == type }) {
            if let value { lines[index].value = value } else { lines.remove(at: index) }
        } else if let value {
            let anchor = lines.firstIndex { $0.type == after }.map { $0 + 1 } ?? lines.count
            lines.insert(SDPLine(type, value), at: anchor)
        }
    }
}
