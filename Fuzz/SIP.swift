// SIP: datagram parse → serialize → parse is stable, validation and typed fields never crash,
// and the stream parser frames the same bytes the same way whether fed at once or split.

/// One fuzz input for the SIP target.
func fuzzSIP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    if let message = try? SIPMessage.parse(bytes) {
        let valid = (try? message.validate()) != nil
        _ = (try? message.vias(), try? message.contacts(), try? message.routes(), try? message.from(), try? message.to())
        _ = (try? message.cseq(), try? message.maxForwards(), message.contentType, message.callID)
        if case .digit(let key) = InfoDTMF.read(contentType: message.contentType, body: message.body) {
            precondition("0123456789*#ABCD".contains(key), "an INFO key outside DTMF's")
        }
        let wire = message.serialize()
        guard let again = try? SIPMessage.parse(wire) else { preconditionFailure("serialized SIP failed to parse") }
        precondition(again.startLine == message.startLine, "start line changed in a round trip")
        precondition(again.body == message.body, "body changed in a round trip")
        precondition(again.serialize() == wire, "SIP serialization is not stable")
        if valid {
            guard (try? again.validate()) != nil else { preconditionFailure("a valid message became invalid") }
            if let from = try? message.from() {
                precondition((try? SIPAddress.parse(from.description)) == from, "address round trip")
            }
            if let vias = try? message.vias() {
                for via in vias { precondition((try? SIPVia.parse(via.description)) == via, "Via round trip") }
            }
        }
    }
    var whole = SIPStreamParser(limits: SIPParserLimits(maxMessageSize: 4096))
    whole.append(contentsOf: bytes)
    var a: [SIPMessage] = []
    while let m = try? whole.next() { a.append(m) }
    var split = SIPStreamParser(limits: SIPParserLimits(maxMessageSize: 4096))
    var b: [SIPMessage] = []
    let half = size / 2
    split.append(contentsOf: bytes[0..<half])
    while let m = try? split.next() { b.append(m) }
    split.append(contentsOf: bytes[half...])
    while let m = try? split.next() { b.append(m) }
    precondition(a == b, "stream framing depends on how bytes arrive")
    return 0
}
