/// One media section: the `m=` line and the lines up to the next one (RFC 8866 §5.14).
///
/// ```
/// m=<media> <port>[/<number of ports>] <proto> <fmt> ...
/// ```
///
/// In unified plan (RFC 8829) each section is one transceiver, identified by `a=mid`.
public struct MediaDescription: Hashable, Sendable, SDPLineContainer {
    /// `audio`, `video`, `application`, ...
    public var kind: String
    public var port: UInt16
    public var portCount: Int?
    /// `UDP/TLS/RTP/SAVPF`, `UDP/DTLS/SCTP`, ...
    public var proto: String
    /// Payload types (or `webrtc-datachannel`), in preference order.
    public var formats: [String]
    /// Every line after `m=`, in order.
    public var lines: [SDPLine]

    public init(kind: String, port: UInt16 = 9, portCount: Int? = nil, proto: String = "UDP/TLS/RTP/SAVPF",
                formats: [String], lines: [SDPLine] = []) {
        self.kind = kind
        self.port = port
        self.portCount = portCount
        self.proto = proto
        self.formats = formats
        self.lines = lines
    }

    /// Parses the value of an `m=` line.
    init?(mediaLine value: String) {
        let f = value.split(separator: " ")
        guard f.count >= 3 else { return nil }
        let portPart = f[1].split(separator: "/", omittingEmptySubsequences: false)
        guard portPart.count <= 2, let port = UInt16(portPart[0]) else { return nil }
        var count: Int?
        if portPart.count == 2 {
            guard let c = Int(portPart[1]), c >= 0, c <= 65535 else { return nil }
            count = c
        }
        self.init(kind: String(f[0]), port: port, portCount: count, proto: String(f[2]),
                  formats: f.dropFirst(3).map(String.init))
    }

    /// The value of the `m=` line.
    public var mediaLine: String {
        ([kind, String(port) + (portCount.map { "/\($0)" } ?? ""), proto] + formats).joined(separator: " ")
    }

    // MARK: Typed accessors

    /// `a=mid` (RFC 8843 §9.1).
    public var mid: String? {
        get { attributeValue("mid") }
        set { setAttribute("mid", newValue, present: newValue != nil) }
    }

    public var msid: SDPMediaStreamID? {
        get { attributeValue("msid").flatMap(SDPMediaStreamID.init) }
        set { setAttribute("msid", newValue?.attributeValue, present: newValue != nil) }
    }

    /// The direction attribute; nil when absent (RFC 8866 §6.7 then implies sendrecv).
    public var direction: SDPDirection? {
        get {
            // A direction is a flag attribute, so its whole value is the name.
            for line in lines {
                if line.type == "a", let direction = SDPDirection(rawValue: line.value) { return direction }
            }
            return nil
        }
        set {
            let isDirection = { (line: SDPLine) in line.type == "a" && SDPDirection(rawValue: line.value) != nil }
            guard let first = lines.firstIndex(where: isDirection) else {
                if let newValue { lines.append(.attribute(newValue.rawValue)) }
                return
            }
            var kept: [SDPLine] = []
            for (index, line) in lines.enumerated() {
                if index == first {
                    if let newValue { kept.append(.attribute(newValue.rawValue)) }
                } else if !isDirection(line) {
                    kept.append(line)
                }
            }
            lines = kept
        }
    }

    public var rtcpMux: Bool {
        get { hasAttribute("rtcp-mux") }
        set { setFlag("rtcp-mux", newValue) }
    }

    public var rtcpReducedSize: Bool {
        get { hasAttribute("rtcp-rsize") }
        set { setFlag("rtcp-rsize", newValue) }
    }

    public var rtpMaps: [SDPRTPMap] { attributeValues("rtpmap").compactMap(SDPRTPMap.init) }
    public var formatParameters: [SDPFormatParameters] { attributeValues("fmtp").compactMap(SDPFormatParameters.init) }
    public var rtcpFeedback: [SDPRTCPFeedback] { attributeValues("rtcp-fb").compactMap(SDPRTCPFeedback.init) }
    public var ssrcAttributes: [SDPSSRCAttribute] { attributeValues("ssrc").compactMap(SDPSSRCAttribute.init) }
    public var ssrcGroups: [SDPSSRCGroup] { attributeValues("ssrc-group").compactMap(SDPSSRCGroup.init) }
    public var candidates: [ICECandidate] { attributeValues("candidate").compactMap(ICECandidate.init) }
    public var endOfCandidates: Bool {
        get { hasAttribute("end-of-candidates") }
        set { setFlag("end-of-candidates", newValue) }
    }

    /// Distinct SSRCs declared with `a=ssrc`, in first-seen order.
    public var ssrcs: [UInt32] {
        var seen = Set<UInt32>()
        return ssrcAttributes.compactMap { seen.insert($0.ssrc).inserted ? $0.ssrc : nil }
    }

    public func rtpMap(payloadType: UInt8) -> SDPRTPMap? { rtpMaps.first { $0.payloadType == payloadType } }

    public func formatParameters(payloadType: UInt8) -> SDPFormatParameters? {
        formatParameters.first { $0.payloadType == payloadType }
    }

    /// Feedback for `payloadType`, including wildcard `*` entries.
    public func rtcpFeedback(payloadType: UInt8) -> [SDPRTCPFeedback] {
        rtcpFeedback.filter { $0.payloadType == "*" || $0.payloadType == String(payloadType) }
    }

    /// The RTX payload type whose `apt=` points at `payloadType` (RFC 4588 §8.6).
    ///
    /// One pass over the rtpmaps and one over the fmtps: a hostile offer with thousands of each
    /// costs linear time, not one rtpmap scan per fmtp.
    public func retransmissionPayloadType(for payloadType: UInt8) -> UInt8? {
        var isRetransmission = [Bool](repeating: false, count: 128)
        var seen = [Bool](repeating: false, count: 128)
        for map in rtpMaps where !seen[Int(map.payloadType)] {
            // The first rtpmap for a payload type is the one `rtpMap(payloadType:)` answers with.
            seen[Int(map.payloadType)] = true
            isRetransmission[Int(map.payloadType)] = map.encodingName.lowercased() == "rtx"
        }
        let target = String(payloadType)
        for fmtp in formatParameters where isRetransmission[Int(fmtp.payloadType)] {
            if fmtp["apt"] == target { return fmtp.payloadType }
        }
        return nil
    }

    /// The `c=` line value, e.g. `IN IP4 0.0.0.0`.
    public var connection: String? {
        lines.first { $0.type == "c" }?.value
    }

    /// The RTP streams a simulcast sender sends (RFC 8853 `a=simulcast:send`, each named by an
    /// RFC 8851 `a=rid:<id> send` line), in the attribute's order: each stream's first alternative,
    /// paused (`~`) ones included. Ids without their `a=rid` line, repeated ids, ids that are not
    /// 1–16 letters, digits, `-` or `_`, and streams past `maxSimulcastStreams` are left out; empty when the
    /// m-line does not simulcast or names fewer than two streams.
    public var simulcastSendStreams: [String] {
        guard let value = attributeValue("simulcast") else { return [] }
        let fields = value.split(separator: " ", omittingEmptySubsequences: true)
        guard let at = fields.firstIndex(of: "send"), at + 1 < fields.count else { return [] }
        var declared = Set<Substring>()
        for rid in attributeValues("rid") {
            let parts = rid.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            if parts.count >= 2, parts[1] == "send" { declared.insert(parts[0]) }
        }
        var streams: [String] = []
        for stream in fields[at + 1].split(separator: ";") {
            guard streams.count < Self.maxSimulcastStreams,
                  var id = stream.split(separator: ",", omittingEmptySubsequences: true).first else { continue }
            if id.hasPrefix("~") { id = id.dropFirst() }
            guard Self.isRTPStreamID(id), declared.contains(id), !streams.contains(String(id)) else { continue }
            streams.append(String(id))
        }
        return streams.count >= 2 ? streams : []
    }

    /// Streams one simulcast m-line is read with at most (browsers send three).
    public static let maxSimulcastStreams = 4

    /// RFC 8851 §10 `rid-id`, bounded as the RTP stream id header extension carries it (RFC 8852: 16 bytes).
    static func isRTPStreamID(_ id: Substring) -> Bool {
        !id.isEmpty && id.utf8.count <= 16
            && id.utf8.allSatisfy { $0 == 0x2D || $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
    }
}
