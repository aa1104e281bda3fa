/// The CSeq header: a sequence number below 2^31 and the method (RFC 3261 §8.1.1.5, §20.16).
public struct SIPCSeq: Hashable, Sendable, CustomStringConvertible {
    public var sequence: UInt32
    public var method: SIPMethod

    public init(_ sequence: UInt32, _ method: SIPMethod) {
        self.sequence = sequence
        self.method = method
    }

    public static func parse(_ text: some StringProtocol) throws(SIPParseError) -> SIPCSeq {
        let parts = Substring(text).split(whereSeparator: SIPSyntax.isWhitespace)
        guard parts.count == 2 else { throw .bad(.invalidCSeq, "CSeq is not <number> <method>") }
        guard let n = SIPSyntax.number(parts[0], max: UInt64(Int32.max)) else {
            throw .bad(.invalidCSeq, "CSeq number out of range")
        }
        guard SIPSyntax.isToken(parts[1]) else { throw .bad(.invalidCSeq, "invalid CSeq method") }
        return SIPCSeq(UInt32(n), SIPMethod(String(parts[1])))
    }

    public var description: String { "\(sequence) \(method)" }
}
