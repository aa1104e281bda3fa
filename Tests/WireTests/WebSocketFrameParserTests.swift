import Testing
@testable import Wire

@Suite("WebSocket frame parser")
struct WebSocketFrameParserTests {
    static func parse(_ input: [UInt8], role: WebSocketRole, maxFrameSize: Int = 1 << 20)
        -> FeedResult<WebSocketFrame, WebSocketError>
    {
        feedAllWays(input) { WebSocketFrameParser(role: role, maxFrameSize: maxFrameSize) }
    }

    static let hello = bytes("Hello")

    @Test("RFC 6455 5.7: single-frame unmasked text")
    func unmaskedText() {
        let wire: [UInt8] = [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]
        let result = Self.parse(wire, role: .client)
        #expect(result == FeedResult(events: [WebSocketFrame(opcode: .text, payload: Self.hello)], error: nil))
        #expect(WebSocketFrame.text("Hello").serialized() == wire)
    }

    @Test("RFC 6455 5.7: single-frame masked text")
    func maskedText() {
        let wire: [UInt8] = [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]
        let frame = WebSocketFrame(opcode: .text, payload: Self.hello, maskingKey: 0x37FA_213D)
        #expect(Self.parse(wire, role: .server) == FeedResult(events: [frame], error: nil))
        #expect(WebSocketFrame.text("Hello").serialized(maskingKey: 0x37FA_213D) == wire)
    }

    @Test("RFC 6455 5.7: fragmented unmasked text")
    func fragmented() throws {
        let wire: [UInt8] = [0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f]
        let result = Self.parse(wire, role: .client)
        #expect(result.events == [
            WebSocketFrame(fin: false, opcode: .text, payload: bytes("Hel")),
            WebSocketFrame(fin: true, opcode: .continuation, payload: bytes("lo")),
        ])
        var assembler = WebSocketMessageAssembler()
        #expect(try assembler.push(result.events[0]) == nil)
        #expect(try assembler.push(result.events[1]) == .text("Hello"))
    }

    @Test("RFC 6455 5.7: unmasked ping and masked pong")
    func pingPong() {
        let ping: [UInt8] = [0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]
        #expect(Self.parse(ping, role: .client).events == [WebSocketFrame(opcode: .ping, payload: Self.hello)])
        #expect(WebSocketFrame.ping(Self.hello).serialized() == ping)
        let pong: [UInt8] = [0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]
        #expect(Self.parse(pong, role: .server).events == [WebSocketFrame(opcode: .pong, payload: Self.hello, maskingKey: 0x37FA_213D)])
        #expect(WebSocketFrame.pong(Self.hello).serialized(maskingKey: 0x37FA_213D) == pong)
    }

    @Test("RFC 6455 5.7: 256-byte and 64 KiB binary frames use 16- and 64-bit lengths")
    func extendedLengths() {
        let small = (0..<256).map { UInt8($0 & 0xFF) }
        let smallWire: [UInt8] = [0x82, 0x7E, 0x01, 0x00] + small
        #expect(Self.parse(smallWire, role: .client).events == [WebSocketFrame(opcode: .binary, payload: small)])
        #expect(WebSocketFrame.binary(small).serialized() == smallWire)

        let large = (0..<65536).map { UInt8($0 % 251) }
        let largeWire: [UInt8] = [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0] + large
        var parser = WebSocketFrameParser(role: .client)
        parser.append(contentsOf: largeWire)
        #expect((try? parser.next()) == WebSocketFrame(opcode: .binary, payload: large))
        #expect(WebSocketFrame.binary(large).serialized() == largeWire)
    }

    @Test("several frames in one buffer come out in order")
    func sequence() {
        let frames = [WebSocketFrame.text("a"), .ping([1]), .binary([2, 3]), .close(code: .goingAway, reason: "bye")]
        let wire = frames.flatMap { $0.serialized() }
        #expect(Self.parse(wire, role: .client).events == frames)
    }

    struct Bad: CustomTestStringConvertible, Sendable {
        let name: String
        let role: WebSocketRole
        let wire: [UInt8]
        let kind: WebSocketError.Kind
        let code: WebSocketCloseCode
        var testDescription: String { name }
    }

    static let bad: [Bad] = [
        Bad(name: "unmasked client frame", role: .server, wire: [0x81, 0x01, 0x41], kind: .unmaskedClientFrame, code: 1002),
        Bad(name: "masked server frame", role: .client, wire: [0x81, 0x81, 1, 2, 3, 4, 0x41], kind: .maskedServerFrame, code: 1002),
        Bad(name: "RSV1 without extension", role: .client, wire: [0xC1, 0x00], kind: .reservedBitsSet(4), code: 1002),
        Bad(name: "RSV3 without extension", role: .client, wire: [0x91, 0x00], kind: .reservedBitsSet(1), code: 1002),
        Bad(name: "reserved data opcode", role: .client, wire: [0x83, 0x00], kind: .reservedOpcode(3), code: 1002),
        Bad(name: "reserved control opcode", role: .client, wire: [0x8B, 0x00], kind: .reservedOpcode(0xB), code: 1002),
        Bad(name: "fragmented ping", role: .client, wire: [0x09, 0x00], kind: .fragmentedControlFrame, code: 1002),
        Bad(name: "ping over 125 bytes", role: .client, wire: [0x89, 0x7E, 0x00, 0x7E], kind: .controlFrameTooLong(126), code: 1002),
        Bad(name: "16-bit length below 126", role: .client, wire: [0x82, 0x7E, 0x00, 0x7D], kind: .nonMinimalLength, code: 1002),
        Bad(name: "64-bit length below 65536", role: .client, wire: [0x82, 0x7F, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF], kind: .nonMinimalLength, code: 1002),
        Bad(name: "64-bit length with MSB set", role: .client, wire: [0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 1], kind: .lengthHighBitSet, code: 1002),
        Bad(name: "frame over the size limit", role: .client, wire: [0x82, 0x7F, 0, 0, 0, 0, 0, 0x10, 0, 1],
            kind: .frameTooLarge(length: 0x10_0001, limit: 1 << 20), code: 1009),
    ]

    @Test("protocol violations fail with the right close code", arguments: bad)
    func violations(_ entry: Bad) {
        let result = Self.parse(entry.wire, role: entry.role)
        #expect(result.events.isEmpty)
        #expect(result.error?.kind == entry.kind)
        #expect(result.error?.closeCode == entry.code)
    }

    @Test("an oversized frame fails from its header, before the payload arrives")
    func oversizedFailsFast() {
        var parser = WebSocketFrameParser(role: .server, maxFrameSize: 1000)
        parser.append(contentsOf: [0x82, 0xFE, 0x03, 0xE9])
        #expect(throws: WebSocketError(.frameTooLarge(length: 1001, limit: 1000))) { try parser.next() }
        #expect(throws: WebSocketError.self) { try parser.next() }
    }

    @Test("negotiated reserved bits are let through")
    func allowedReservedBits() throws {
        var parser = WebSocketFrameParser(role: .client)
        parser.allowedReservedBits = 0x40
        parser.append(contentsOf: [0xC1, 0x01, 0x41])
        let frame = try #require(try parser.next())
        #expect(frame.rsv1 && !frame.rsv2 && !frame.rsv3)
        #expect(frame.serialized() == [0xC1, 0x01, 0x41])
    }

    @Test("close frame builder writes the code and cuts the reason at a character boundary")
    func closeBuilder() throws {
        let frame = WebSocketFrame.close(code: .normalClosure, reason: String(repeating: "é", count: 100))
        #expect(frame.payload.count == 124)
        #expect(frame.payload.prefix(2) == [0x03, 0xE8])
        var assembler = WebSocketMessageAssembler()
        let message = try assembler.push(frame)
        #expect(message == .close(code: .normalClosure, reason: String(repeating: "é", count: 61)))
        #expect(WebSocketFrame.close(code: nil).payload.isEmpty)
    }
}
