/// Writing messages: CRLF line endings, canonical header names, Content-Length always set.
extension SIPMessage {
    /// The message as it goes on the wire. Content-Length is rewritten to the body size in the
    /// place it had, or appended.
    public func serialize() -> [UInt8] {
        var out = ""
        out.reserveCapacity(512 + body.count)
        switch startLine {
        case .request(let method, let uri): out += "\(method) \(uri) SIP/2.0\r\n"
        case .response(let status, let reason): out += "SIP/2.0 \(status) \(reason)\r\n"
        }
        var wroteLength = false
        for field in headers {
            if field.name == SIPHeaderName.contentLength {
                if wroteLength { continue }
                wroteLength = true
                out += "Content-Length: \(body.count)\r\n"
            } else {
                out += "\(field.name): \(field.value)\r\n"
            }
        }
        if !wroteLength { out += "Content-Length: \(body.count)\r\n" }
        out += "\r\n"
        var bytes = Array(out.utf8)
        bytes.append(contentsOf: body)
        return bytes
    }

    public var text: String { String(decoding: serialize(), as: UTF8.self) }
}
