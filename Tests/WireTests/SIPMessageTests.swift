import Testing
@testable import Wire

@Suite("SIP messages, URIs and headers")
struct SIPMessageTests {
    static let invite = """
        INVITE sip:bob@192.0.2.4 SIP/2.0\r
        v: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK776asdhds;rport\r
        Max-Forwards: 70\r
        t: Bob <sip:bob@192.0.2.4>\r
        f: "Alice A." <sip:alice@192.0.2.1>;tag=1928301774\r
        i: a84b4c76e66710@192.0.2.1\r
        CSeq: 314159 INVITE\r
        m: <sip:alice@192.0.2.1:5060;transport=udp>\r
        k: 100rel, timer\r
        c: application/sdp\r
        l: 4\r
        \r
        v=0\n
        """

    @Test("a header value starting with a combining mark survives serialize → parse unchanged (fuzz reproducer)")
    func combiningMarkValue() throws {
        // Call-ID value "\u{711}x": written back as "Call-ID: \u{711}x", the space and the mark form one
        // grapheme, which a trim by Character kept as part of the value.
        let text = "SIP/2.0 100 Trying\r\nVia: SIP/2.0/UDP 192.0.2.105;branch=z9hG4bK2398ndaoe\r\nCall-ID:\u{711}x@a\r\n"
            + "CSeq: 35 INVITE\r\nFrom: <sip:user@example.com>;tag=3\r\nTo: <sip:user@example.edu>;tag=9\r\nContent-Length: 0\r\n\r\n"
        let message = try SIPMessage.parse(Array(text.utf8))
        #expect(message.callID == "\u{711}x@a")
        let wire = message.serialize()
        let again = try SIPMessage.parse(wire)
        #expect(again.callID == message.callID)
        #expect(again.serialize() == wire)
    }

    @Test("a message with as many header fields as allowed and no Content-Length reparses once serialized (fuzz reproducer)")
    func headerLimitAndTheWrittenContentLength() throws {
        // 256 fields, none a Content-Length: `serialize` adds one, which must not push the reparse over the limit.
        let text = "INVITE sip:a@b SIP/2.0\r\n" + String(repeating: "X: a\r\n", count: 255)
            + "Via: SIP/2.0/UDP h;branch=z9hG4bK1\r\n\r\n"
        let message = try SIPMessage.parse(Array(text.utf8))
        let again = try SIPMessage.parse(message.serialize())
        #expect(again.serialize() == message.serialize())
        // The limit itself holds: one field more is 513, and so are more Content-Length lines than fields allowed.
        let over = "INVITE sip:a@b SIP/2.0\r\n" + String(repeating: "X: a\r\n", count: 257) + "\r\n"
        #expect(throws: SIPParseError(.tooManyHeaders, status: 513, "more than 256 header fields")) { try SIPMessage.parse(Array(over.utf8)) }
        let lengths = "INVITE sip:a@b SIP/2.0\r\n" + String(repeating: "Content-Length: 0\r\n", count: 257) + "\r\n"
        #expect(throws: SIPParseError(.tooManyHeaders, status: 513, "more than 256 header fields")) { try SIPMessage.parse(Array(lengths.utf8)) }
    }

    @Test("compact forms expand to canonical names and typed fields read them")
    func compactForms() throws {
        let m = try SIPMessage.parse(Array(Self.invite.utf8))
        try m.validate()
        #expect(m.headers.fields.map(\.name) == ["Via", "Max-Forwards", "To", "From", "Call-ID", "CSeq", "Contact",
                                                 "Supported", "Content-Type", "Content-Length"])
        #expect(m.callID == "a84b4c76e66710@192.0.2.1")
        #expect(try m.topVia().rport == 0 && (try m.topVia().hasRFC3261Branch))
        #expect(try m.from().displayName == "Alice A.")
        #expect(try m.contacts().first?.uri.transport == "udp")
        #expect(m.headers.tokens("Supported") == ["100rel", "timer"])
        #expect(m.contentType == "application/sdp")
        #expect(m.body == Array("v=0\n".utf8))
    }

    @Test("URIs parse and print", arguments: [
        ("sip:alice@atlanta.com", "alice", "atlanta.com", nil as UInt16?),
        ("sip:alice:secretword@atlanta.com;transport=tcp", "alice", "atlanta.com", nil),
        ("sips:alice@atlanta.com?subject=project%20x&priority=urgent", "alice", "atlanta.com", nil),
        ("sip:+1-212-555-1212:1234@gateway.com;user=phone", "+1-212-555-1212", "gateway.com", nil),
        ("sip:alice@192.0.2.4:5070", "alice", "192.0.2.4", 5070),
        ("sip:[2001:db8::10]:5070;lr", nil, "[2001:db8::10]", 5070),
        ("sip:atlanta.com;method=REGISTER?to=alice%40atlanta.com", nil, "atlanta.com", nil),
        ("sip:alice;day=tuesday@atlanta.com", "alice;day=tuesday", "atlanta.com", nil),
    ])
    func uris(text: String, user: String?, host: String, port: UInt16?) throws {
        let uri = try SIPURI.parse(text)
        #expect(uri.user == user && uri.host == host && uri.port == port)
        #expect(uri.description == text)
        #expect(try SIPURI.parse(uri.description) == uri)
    }

    @Test("tel and unknown schemes")
    func otherSchemes() throws {
        let tel = try SIPURI.parse("tel:+1-201-555-0123;phone-context=example.com")
        #expect(tel.scheme == "tel" && tel.user == "+1-201-555-0123" && tel.parameters["phone-context"] == "example.com")
        #expect(tel.description == "tel:+1-201-555-0123;phone-context=example.com")
        let urn = try SIPURI.parse("urn:service:sos")
        #expect(!urn.isSupportedScheme && urn.description == "urn:service:sos")
    }

    @Test("malformed URIs are 400", arguments: [
        "alice@atlanta.com", "<sip:a@b>", "sip:a b@c", "sip:alice@", "sip:alice@host:99999", "sip:alice@[::1",
        "sip:al%zzice@host", "sip:host;", "sip:host?x",
    ])
    func badURIs(text: String) {
        #expect(throws: SIPParseError.self) { try SIPURI.parse(text) }
    }

    @Test("addresses: name-addr, addr-spec, parameters")
    func addresses() throws {
        let a = try SIPAddress.parse("Anonymous <sip:c8oqz84zk7z@privacy.org>;tag=hyh8")
        #expect(a.displayName == "Anonymous" && a.tag == "hyh8" && a.uri.host == "privacy.org")
        let b = try SIPAddress.parse("sip:+12125551212@server.phone2net.com;tag=887s")
        #expect(b.displayName == nil && b.tag == "887s" && b.uri.parameters.isEmpty)
        let c = try SIPAddress.parse("<sip:p1.example.com;lr>")
        #expect(c.uri.parameters.contains("lr") && c.parameters.isEmpty)
        #expect(try SIPAddress.parse(a.description) == a)
        #expect(throws: SIPParseError.self) { try SIPAddress.parse("sip:a@b?x=y") }
        #expect(throws: SIPParseError.self) { try SIPAddress.parse("Bell, Alexander <sip:a@b>") }
    }

    @Test("Via: sent-protocol with whitespace, IPv6, received and rport")
    func via() throws {
        let v = try SIPVia.parse("SIP / 2.0 / TCP [2001:db8::9:1]:5061 ; branch = z9hG4bKx ; received=2001:db8::9:255;rport=5062")
        #expect(v.transport == "TCP" && v.host == "[2001:db8::9:1]" && v.port == 5061)
        #expect(v.branch == "z9hG4bKx" && v.received == "2001:db8::9:255" && v.rport == 5062)
        #expect(try SIPVia.parse(v.description) == v)
        #expect(throws: SIPParseError.self) { try SIPVia.parse("SIP/2.0/UDP") }
        #expect(throws: SIPParseError.self) { try SIPVia.parse("SIP/3.0/UDP host") }
    }

    @Test("header lists merge comma-separated and repeated fields")
    func lists() throws {
        var h = SIPHeaders()
        h.add("Route", "<sip:p1.example.com;lr>, <sip:p2.example.com;lr>")
        h.add("route", "<sip:p3.example.com;lr>")
        #expect(try h.list("Route").count == 3)
        h.removeFirstElement("Route")
        #expect(try h.list("Route").first == "<sip:p2.example.com;lr>")
        h.prepend("Via", "SIP/2.0/UDP a;branch=z9hG4bK1")
        h.prepend("Via", "SIP/2.0/UDP b;branch=z9hG4bK2")
        #expect(h.values("v").first == "SIP/2.0/UDP b;branch=z9hG4bK2")
    }

    @Test("malformed datagrams map to status codes", arguments: [
        ("INVITE sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\n", 400),
        ("INVITE sip:a@b SIP/3.0\r\n\r\n", 505),
        ("INVITE sip:a@b HTTP/1.1\r\n\r\n", 400),
        ("INVITE  sip:a@b SIP/2.0\r\n\r\n", 400),
        ("INV(ITE sip:a@b SIP/2.0\r\n\r\n", 400),
        ("INVITE sip:a@b SIP/2.0\r\nBad Name: x\r\n\r\n", 400),
        ("INVITE sip:a@b SIP/2.0\r\nNoColon\r\n\r\n", 400),
        ("INVITE sip:a@b SIP/2.0\r\nContent-Length: 10\r\n\r\nabc", 400),
        ("INVITE sip:a@b SIP/2.0\r\nContent-Length: x\r\n\r\n", 400),
        ("INVITE sip:a@b SIP/2.0\r\n continuation\r\n\r\n", 400),
        ("SIP/2.0 99 Low\r\n\r\n", 400),
    ])
    func malformed(text: String, status: Int) {
        do {
            _ = try SIPMessage.parse(Array(text.utf8))
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.status == status)
        }
    }

    @Test("a datagram over the limit is 513")
    func tooLarge() {
        let big = Array(Self.invite.utf8) + [UInt8](repeating: 0x61, count: 70_000)
        #expect(throws: SIPParseError(.messageTooLarge, status: 513, "message of \(big.count) bytes exceeds 65535")) {
            try SIPMessage.parse(big)
        }
    }

    @Test("stream framing: whole, byte by byte, keep-alives, pipelined")
    func stream() throws {
        let one = try SIPMessage.parse(Array(Self.invite.utf8))
        let wire = Array("\r\n\r\n".utf8) + one.serialize() + Array("\r\n".utf8) + one.serialize()
        var whole = SIPStreamParser()
        whole.append(contentsOf: wire)
        #expect(try whole.next() == one)
        #expect(try whole.next() == one)
        #expect(try whole.next() == nil)
        var bytewise = SIPStreamParser()
        var got: [SIPMessage] = []
        for b in wire {
            bytewise.append(contentsOf: [b])
            while let m = try bytewise.next() { got.append(m) }
        }
        #expect(got == [one, one])
    }

    @Test("stream framing: missing Content-Length and oversized messages fail the stream")
    func streamErrors() {
        var p = SIPStreamParser()
        p.append(contentsOf: Array("OPTIONS sip:a@b SIP/2.0\r\nVia: x\r\n\r\n".utf8))
        #expect(throws: SIPParseError.self) { try p.next() }
        var q = SIPStreamParser(limits: SIPParserLimits(maxMessageSize: 1000))
        q.append(contentsOf: [UInt8](repeating: 0x41, count: 1200))
        do { _ = try q.next(); Issue.record("accepted") } catch { #expect(error.status == 513) }
        var r = SIPStreamParser(limits: SIPParserLimits(maxMessageSize: 1000))
        r.append(contentsOf: Array("OPTIONS sip:a@b SIP/2.0\r\nContent-Length: 5000\r\n\r\n".utf8))
        do { _ = try r.next(); Issue.record("accepted") } catch { #expect(error.status == 513) }
    }

    @Test("built messages serialize with Content-Length and reparse")
    func build() throws {
        var h = SIPHeaders()
        h.add("Via", "SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bKabc")
        h.add("From", SIPAddress(uri: SIPURI(user: "a", host: "127.0.0.1"), parameters: SIPParameters([.init("tag", "x")])).description)
        h.add("To", SIPAddress(uri: SIPURI(user: "b", host: "127.0.0.1")).description)
        h.add("Call-ID", "c1")
        h.add("CSeq", SIPCSeq(1, .options).description)
        h.add("Max-Forwards", "70")
        let m = SIPMessage.request(.options, SIPURI(user: "b", host: "127.0.0.1"), headers: h, body: Array("hi".utf8))
        let parsed = try SIPMessage.parse(m.serialize())
        try parsed.validate()
        #expect(parsed.headers["Content-Length"] == "2" && parsed.body == Array("hi".utf8))
        #expect(SIPMessage.response(486).reason == "Busy Here")
    }
}
