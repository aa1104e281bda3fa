/// An ICE candidate as carried in `a=candidate:` and in trickle signaling (RFC 8839 §5.1).
///
/// ```
/// candidate:<foundation> <component> <transport> <priority> <address> <port> typ <type>
///           [raddr <addr>] [rport <port>] [tcptype active|passive|so]
///           [generation <n>] [ufrag <u>] [network-id <n>] [network-cost <n>] [<name> <value>]...
/// ```
public struct ICECandidate: Hashable, Sendable {
    /// Candidate type (RFC 8445 §5.1.1): host, srflx, prflx, relay.
    public struct CandidateType: RawRepresentable, Hashable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let host = CandidateType(rawValue: "host")
        public static let serverReflexive = CandidateType(rawValue: "srflx")
        public static let peerReflexive = CandidateType(rawValue: "prflx")
        public static let relay = CandidateType(rawValue: "relay")
    }

    /// A `name value` pair this type does not model, kept for round trips.
    public struct Extension: Hashable, Sendable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public var foundation: String
    /// 1 = RTP, 2 = RTCP.
    public var component: Int
    /// `udp` or `tcp` as written (case preserved).
    public var transport: String
    public var priority: UInt32
    /// IP literal or an mDNS `.local` name.
    public var address: String
    public var port: UInt16
    public var type: CandidateType
    public var relatedAddress: String?
    public var relatedPort: UInt16?
    public var tcpType: String?
    public var generation: Int?
    public var ufrag: String?
    public var networkID: Int?
    public var networkCost: Int?
    public var extensions: [Extension]

    public init(
        foundation: String, component: Int = 1, transport: String = "udp", priority: UInt32, address: String,
        port: UInt16, type: CandidateType, relatedAddress: String? = nil, relatedPort: UInt16? = nil,
        tcpType: String? = nil, generation: Int? = nil, ufrag: String? = nil, networkID: Int? = nil,
        networkCost: Int? = nil, extensions: [Extension] = []
    ) {
        self.foundation = foundation
        self.component = component
        self.transport = transport
        self.priority = priority
        self.address = address
        self.port = port
        self.type = type
        self.relatedAddress = relatedAddress
        self.relatedPort = relatedPort
        self.tcpType = tcpType
        self.generation = generation
        self.ufrag = ufrag
        self.networkID = networkID
        self.networkCost = networkCost
        self.extensions = extensions
    }

    /// RFC 8839 §5.1: `foundation = 1*32 ice-char`, `ice-char = ALPHA / DIGIT / "+" / "/"`. Checked on bytes:
    /// a foundation that began with a combining mark would merge with the `:` of `candidate:` into one
    /// Character when written back, and the candidate would not read back as itself.
    static func isFoundation(_ s: Substring) -> Bool {
        let bytes = s.utf8
        guard !bytes.isEmpty, bytes.count <= 32 else { return false }
        return bytes.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x7A) || b == 0x2B || b == 0x2F
        }
    }

    /// Parses `candidate:...`, `a=candidate:...` or the bare value.
    public init?(_ text: String) {
        var body = Substring(text)
        if body.hasPrefix("a=") { body = body.dropFirst(2) }
        if body.hasPrefix("candidate:") { body = body.dropFirst("candidate:".count) }
        let f = body.split(separator: " ")
        guard f.count >= 8, f.count % 2 == 0, f[6] == "typ", Self.isFoundation(f[0]),
              let component = Int(f[1]), component >= 0, component <= 256,
              let priority = UInt32(f[3]), let port = UInt16(f[5]) else { return nil }
        self.init(foundation: String(f[0]), component: component, transport: String(f[2]), priority: priority,
                  address: String(f[4]), port: port, type: CandidateType(rawValue: String(f[7])))
        var i = 8
        while i + 1 < f.count {
            let name = f[i], value = String(f[i + 1])
            switch name {
            case "raddr" where relatedAddress == nil: relatedAddress = value
            case "rport" where relatedPort == nil:
                guard let p = UInt16(value) else { return nil }
                relatedPort = p
            case "tcptype" where tcpType == nil: tcpType = value
            case "generation" where generation == nil:
                guard let g = Int(value), g >= 0 else { return nil }
                generation = g
            case "ufrag" where ufrag == nil: ufrag = value
            case "network-id" where networkID == nil:
                guard let n = Int(value), n >= 0 else { return nil }
                networkID = n
            case "network-cost" where networkCost == nil:
                guard let n = Int(value), n >= 0 else { return nil }
                networkCost = n
            default: extensions.append(Extension(name: String(name), value: value))
            }
            i += 2
        }
    }

    /// The value after `a=candidate:` (and after `candidate:` in trickle messages).
    public var attributeValue: String {
        var parts = [foundation, String(component), transport, String(priority), address, String(port), "typ", type.rawValue]
        if let relatedAddress { parts += ["raddr", relatedAddress] }
        if let relatedPort { parts += ["rport", String(relatedPort)] }
        if let tcpType { parts += ["tcptype", tcpType] }
        if let generation { parts += ["generation", String(generation)] }
        if let ufrag { parts += ["ufrag", ufrag] }
        if let networkID { parts += ["network-id", String(networkID)] }
        if let networkCost { parts += ["network-cost", String(networkCost)] }
        for e in extensions { parts += [e.name, e.value] }
        return parts.joined(separator: " ")
    }

    /// `candidate:...` as used in trickle ICE / RTCIceCandidate.candidate.
    public var candidateString: String { "candidate:" + attributeValue }

    /// RFC 8445 §5.1.2.1 priority: (2^24)·type pref + (2^8)·local pref + (256 − component).
    public static func priority(typePreference: UInt32, localPreference: UInt32, component: Int) -> UInt32 {
        (typePreference & 0x7E) << 24 | (localPreference & 0xFFFF) << 8 | UInt32(256 - min(max(component, 1), 256))
    }
}
