/// TURN over UDP (RFC 8656), the client's side: the methods' message types, and the attributes the parser keeps
/// raw (`.other`), read and written here.
extension STUNAttributeType {
    public static let lifetime = STUNAttributeType(0x000D)
    public static let xorPeerAddress = STUNAttributeType(0x0012)
    public static let data = STUNAttributeType(0x0013)
    public static let xorRelayedAddress = STUNAttributeType(0x0016)
    public static let requestedTransport = STUNAttributeType(0x0019)
}

extension STUNMessageType {
    public static let allocateRequest = STUNMessageType(method: .allocate, messageClass: .request)
    public static let refreshRequest = STUNMessageType(method: .refresh, messageClass: .request)
    public static let createPermissionRequest = STUNMessageType(method: .createPermission, messageClass: .request)
    public static let sendIndication = STUNMessageType(method: .send, messageClass: .indication)
    public static let dataIndication = STUNMessageType(method: .data, messageClass: .indication)
}

extension STUNAttribute {
    /// An XOR-encoded address (XOR-PEER-ADDRESS) for a message with `transactionID`.
    public static func xorAddress(_ type: STUNAttributeType, _ address: STUNAddress, transactionID: STUNTransactionID) -> STUNAttribute {
        var value: [UInt8] = []
        encodeAddress(address, xor: true, transactionID, into: &value)
        return .other(type: type, value: value)
    }

    /// REQUESTED-TRANSPORT: UDP.
    public static let udpTransport = STUNAttribute.other(type: .requestedTransport, value: [17, 0, 0, 0])

    /// LIFETIME in seconds (0 releases an allocation).
    public static func lifetime(_ seconds: UInt32) -> STUNAttribute {
        var value: [UInt8] = []
        PacketBytes.append32(&value, seconds)
        return .other(type: .lifetime, value: value)
    }
}

extension STUNMessage {
    /// The raw value of the first attribute of `type` the parser kept as it was.
    public func rawValue(_ type: STUNAttributeType) -> [UInt8]? {
        for case .other(let t, let value) in attributes where t == type { return value }
        return nil
    }

    /// An XOR-encoded address attribute (XOR-PEER-ADDRESS, XOR-RELAYED-ADDRESS), decoded.
    public func xorAddress(_ type: STUNAttributeType) -> STUNAddress? {
        rawValue(type).flatMap { value in value.withUnsafeBytes { STUNAttribute.decodeAddress($0, xor: true, transactionID) } }
    }

    /// LIFETIME, in seconds.
    public var lifetime: UInt32? {
        rawValue(.lifetime).flatMap { v in v.count == 4 ? v.withUnsafeBytes { PacketBytes.u32($0, 0) } : nil }
    }

    public var realm: String? {
        for case .realm(let value) in attributes { return value }
        return nil
    }

    public var nonce: String? {
        for case .nonce(let value) in attributes { return value }
        return nil
    }
}
