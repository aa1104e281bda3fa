/// `o=<username> <sess-id> <sess-version> <nettype> <addrtype> <unicast-address>` (RFC 8866 §5.2).
public struct SDPOrigin: Hashable, Sendable {
    public var username: String
    public var sessionID: UInt64
    /// Bumped on every renegotiation (RFC 8829 §5.2.2).
    public var sessionVersion: UInt64
    public var networkType: String
    public var addressType: String
    public var address: String

    public init(
        username: String = "-", sessionID: UInt64, sessionVersion: UInt64, networkType: String = "IN",
        addressType: String = "IP4", address: String = "127.0.0.1"
    ) {
        self.username = username
        self.sessionID = sessionID
        self.sessionVersion = sessionVersion
        self.networkType = networkType
        self.addressType = addressType
        self.address = address
    }

    public init?(_ value: String) {
        let f = value.split(separator: " ")
        guard f.count == 6, let id = UInt64(f[1]), let version = UInt64(f[2]) else { return nil }
        self.init(username: String(f[0]), sessionID: id, sessionVersion: version, networkType: String(f[3]),
                  addressType: String(f[4]), address: String(f[5]))
    }

    public var value: String { "\(username) \(sessionID) \(sessionVersion) \(networkType) \(addressType) \(address)" }
}

/// `t=<start-time> <stop-time>` (RFC 8866 §5.9); WebRTC always sends `t=0 0`.
public struct SDPTiming: Hashable, Sendable {
    public var start: UInt64
    public var stop: UInt64
    public init(start: UInt64 = 0, stop: UInt64 = 0) {
        self.start = start
        self.stop = stop
    }
    public init?(_ value: String) {
        let f = value.split(separator: " ")
        guard f.count == 2, let start = UInt64(f[0]), let stop = UInt64(f[1]) else { return nil }
        self.init(start: start, stop: stop)
    }
    public var value: String { "\(start) \(stop)" }
}

/// `a=group:<semantics> <mid> ...` (RFC 5888 §5), e.g. `BUNDLE 0 1` (RFC 8843).
public struct SDPGroup: Hashable, Sendable {
    public var semantics: String
    public var identifiers: [String]
    public init(semantics: String, identifiers: [String]) {
        self.semantics = semantics
        self.identifiers = identifiers
    }
    public init?(_ value: String) {
        let f = value.split(separator: " ").map(String.init)
        guard let first = f.first else { return nil }
        self.init(semantics: first, identifiers: Array(f.dropFirst()))
    }
    public var attributeValue: String { ([semantics] + identifiers).joined(separator: " ") }
}

/// `a=fingerprint:<hash-func> <hex:hex:...>` (RFC 8122 §5): the DTLS certificate hash.
public struct SDPFingerprint: Hashable, Sendable {
    /// Lowercased hash name (`sha-256`).
    public var algorithm: String
    /// Colon-separated uppercase hex as it appears on the wire.
    public var value: String

    public init(algorithm: String, value: String) {
        self.algorithm = algorithm.lowercased()
        self.value = value
    }

    /// From raw digest bytes, formatted `AB:CD:...`.
    public init(algorithm: String, bytes: [UInt8]) {
        let hex = bytes.map { b -> String in
            let s = String(b, radix: 16, uppercase: true)
            return b < 16 ? "0" + s : s
        }
        self.init(algorithm: algorithm, value: hex.joined(separator: ":"))
    }

    public init?(_ attributeValue: String) {
        let f = attributeValue.split(separator: " ")
        guard f.count == 2 else { return nil }
        self.init(algorithm: String(f[0]), value: String(f[1]))
    }

    /// The digest bytes, or nil if the hex is malformed.
    public var bytes: [UInt8]? {
        var out: [UInt8] = []
        for pair in value.split(separator: ":", omittingEmptySubsequences: false) {
            guard pair.count == 2, let byte = UInt8(pair, radix: 16) else { return nil }
            out.append(byte)
        }
        return out
    }

    public var attributeValue: String { "\(algorithm) \(value)" }
}

/// `a=setup` DTLS role (RFC 4145 §4, RFC 8842 §5.2).
public enum SDPSetupRole: String, Hashable, Sendable {
    case actpass, active, passive, holdconn
}

/// Media direction attribute (RFC 8866 §6.7).
public enum SDPDirection: String, Hashable, Sendable, CaseIterable {
    case sendrecv, sendonly, recvonly, inactive

    /// The direction an answerer uses in reply (RFC 8829 §5.3.1).
    public var reversed: SDPDirection {
        switch self {
        case .sendonly: .recvonly
        case .recvonly: .sendonly
        default: self
        }
    }
}

/// `a=rtpmap:<pt> <encoding>/<clock rate>[/<channels>]` (RFC 8866 §6.6).
public struct SDPRTPMap: Hashable, Sendable {
    public var payloadType: UInt8
    public var encodingName: String
    public var clockRate: UInt32
    public var channels: Int?

    public init(payloadType: UInt8, encodingName: String, clockRate: UInt32, channels: Int? = nil) {
        self.payloadType = payloadType
        self.encodingName = encodingName
        self.clockRate = clockRate
        self.channels = channels
    }

    public init?(_ value: String) {
        let f = value.split(separator: " ", maxSplits: 1)
        guard f.count == 2, let pt = UInt8(f[0]), pt < 128 else { return nil }
        let parts = f[1].split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, !parts[0].isEmpty, let rate = UInt32(parts[1]) else { return nil }
        var channels: Int?
        if parts.count == 3 {
            guard let c = Int(parts[2]), c > 0 else { return nil }
            channels = c
        }
        self.init(payloadType: pt, encodingName: String(parts[0]), clockRate: rate, channels: channels)
    }

    public var attributeValue: String {
        "\(payloadType) \(encodingName)/\(clockRate)" + (channels.map { "/\($0)" } ?? "")
    }
}

/// `a=fmtp:<pt> <parameters>` (RFC 8866 §6.15); parameters are usually `k=v;k=v`.
public struct SDPFormatParameters: Hashable, Sendable {
    public var payloadType: UInt8
    public var parameters: String

    public init(payloadType: UInt8, parameters: String) {
        self.payloadType = payloadType
        self.parameters = parameters
    }

    public init?(_ value: String) {
        let f = value.split(separator: " ", maxSplits: 1)
        guard let first = f.first, let pt = UInt8(first), pt < 128 else { return nil }
        self.init(payloadType: pt, parameters: f.count > 1 ? String(f[1]) : "")
    }

    /// `k=v` pairs in order; bare entries (RED's `111/111`) get an empty key.
    public var pairs: [(key: String, value: String)] {
        parameters.split(separator: ";").map { item in
            let trimmed = item.drop { $0 == " " }
            if let eq = trimmed.firstIndex(of: "=") {
                return (String(trimmed[..<eq]), String(trimmed[trimmed.index(after: eq)...]))
            }
            return ("", String(trimmed))
        }
    }

    public subscript(key: String) -> String? { pairs.first { $0.key == key }?.value }

    public var attributeValue: String { "\(payloadType) \(parameters)" }
}

/// `a=rtcp-fb:<pt|*> <type> [<parameter>]` (RFC 4585 §4.2), e.g. `nack pli`, `transport-cc`.
public struct SDPRTCPFeedback: Hashable, Sendable {
    /// A payload type number or `*`.
    public var payloadType: String
    public var type: String
    public var parameter: String?

    public init(payloadType: String, type: String, parameter: String? = nil) {
        self.payloadType = payloadType
        self.type = type
        self.parameter = parameter
    }

    public init?(_ value: String) {
        let f = value.split(separator: " ", maxSplits: 2)
        guard f.count >= 2 else { return nil }
        self.init(payloadType: String(f[0]), type: String(f[1]), parameter: f.count > 2 ? String(f[2]) : nil)
    }

    public var attributeValue: String { "\(payloadType) \(type)" + (parameter.map { " \($0)" } ?? "") }
}

/// `a=extmap:<id>[/<direction>] <uri> [<attributes>]` (RFC 8285 §8).
public struct SDPExtMap: Hashable, Sendable {
    public var id: Int
    public var direction: SDPDirection?
    public var uri: String
    public var extensionAttributes: String?

    public init(id: Int, direction: SDPDirection? = nil, uri: String, extensionAttributes: String? = nil) {
        self.id = id
        self.direction = direction
        self.uri = uri
        self.extensionAttributes = extensionAttributes
    }

    public init?(_ value: String) {
        let f = value.split(separator: " ", maxSplits: 2)
        guard f.count >= 2 else { return nil }
        let idPart = f[0].split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let id = Int(idPart[0]), (1...255).contains(id) else { return nil }
        var direction: SDPDirection?
        if idPart.count == 2 {
            guard let d = SDPDirection(rawValue: String(idPart[1])) else { return nil }
            direction = d
        }
        self.init(id: id, direction: direction, uri: String(f[1]), extensionAttributes: f.count > 2 ? String(f[2]) : nil)
    }

    public var attributeValue: String {
        "\(id)" + (direction.map { "/\($0.rawValue)" } ?? "") + " \(uri)" + (extensionAttributes.map { " \($0)" } ?? "")
    }
}

/// `a=ssrc:<ssrc> <attribute>[:<value>]` (RFC 5576 §4.1), e.g. `cname:...`, `msid:s t`.
public struct SDPSSRCAttribute: Hashable, Sendable {
    public var ssrc: UInt32
    public var attribute: String
    public var value: String?

    public init(ssrc: UInt32, attribute: String, value: String? = nil) {
        self.ssrc = ssrc
        self.attribute = attribute
        self.value = value
    }

    public init?(_ text: String) {
        let f = text.split(separator: " ", maxSplits: 1)
        guard f.count == 2, let ssrc = UInt32(f[0]) else { return nil }
        if let colon = f[1].firstIndex(of: ":") {
            self.init(ssrc: ssrc, attribute: String(f[1][..<colon]), value: String(f[1][f[1].index(after: colon)...]))
        } else {
            self.init(ssrc: ssrc, attribute: String(f[1]))
        }
    }

    public var attributeValue: String { "\(ssrc) \(attribute)" + (value.map { ":\($0)" } ?? "") }
}

/// `a=ssrc-group:<semantics> <ssrc> ...` (RFC 5576 §4.2): FID pairs media with RTX, SIM lists layers.
public struct SDPSSRCGroup: Hashable, Sendable {
    public var semantics: String
    public var ssrcs: [UInt32]

    public init(semantics: String, ssrcs: [UInt32]) {
        self.semantics = semantics
        self.ssrcs = ssrcs
    }

    public init?(_ value: String) {
        let f = value.split(separator: " ")
        guard let first = f.first else { return nil }
        var ssrcs: [UInt32] = []
        for item in f.dropFirst() {
            guard let ssrc = UInt32(item) else { return nil }
            ssrcs.append(ssrc)
        }
        self.init(semantics: String(first), ssrcs: ssrcs)
    }

    public var attributeValue: String { ([semantics] + ssrcs.map(String.init)).joined(separator: " ") }
}

/// `a=msid:<stream id> [<track id>]` (RFC 8830 §2).
public struct SDPMediaStreamID: Hashable, Sendable {
    public var stream: String
    public var track: String?

    public init(stream: String, track: String? = nil) {
        self.stream = stream
        self.track = track
    }

    public init?(_ value: String) {
        let f = value.split(separator: " ")
        guard f.count == 1 || f.count == 2 else { return nil }
        self.init(stream: String(f[0]), track: f.count == 2 ? String(f[1]) : nil)
    }

    public var attributeValue: String { stream + (track.map { " \($0)" } ?? "") }
}
