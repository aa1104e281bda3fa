import Testing
@testable import Wire

@Suite("WebSocket message assembler")
struct WebSocketMessageAssemblerTests {
    static func run(_ frames: [WebSocketFrame], maxMessageSize: Int = 1 << 20) -> ([WebSocketMessage], WebSocketError?) {
        var assembler = WebSocketMessageAssembler(maxMessageSize: maxMessageSize)
        var messages: [WebSocketMessage] = []
        for frame in frames {
            do {
                if let message = try assembler.push(frame) { messages.append(message) }
            } catch {
                return (messages, error)
            }
        }
        return (messages, nil)
    }

    static func closeFrame(_ payload: [UInt8]) -> WebSocketFrame { WebSocketFrame(opcode: .close, payload: payload) }

    @Test("a ping between fragments is delivered before the message completes")
    func pingBetweenFragments() {
        let (messages, error) = Self.run([
            WebSocketFrame(fin: false, opcode: .binary, payload: [1]),
            .ping([9]),
            WebSocketFrame(fin: false, opcode: .continuation, payload: [2]),
            .pong([]),
            WebSocketFrame(fin: true, opcode: .continuation, payload: [3]),
        ])
        #expect(error == nil)
        #expect(messages == [.ping([9]), .pong([]), .binary([1, 2, 3])])
    }

    @Test("multi-byte characters may be split across fragments")
    func splitCharacter() {
        let snowman = bytes("☃")
        let (messages, error) = Self.run([
            WebSocketFrame(fin: false, opcode: .text, payload: [snowman[0]]),
            WebSocketFrame(fin: false, opcode: .continuation, payload: [snowman[1]]),
            WebSocketFrame(fin: true, opcode: .continuation, payload: [snowman[2]]),
        ])
        #expect(error == nil)
        #expect(messages == [.text("☃")])
    }

    @Test("an invalid UTF-8 prefix fails on its fragment, before the message ends")
    func invalidPrefixFailsFast() {
        let (messages, error) = Self.run([
            WebSocketFrame(fin: false, opcode: .text, payload: [0x41, 0xC0, 0x80]),
        ])
        #expect(messages.isEmpty)
        #expect(error?.closeCode == .invalidPayloadData)
    }

    struct Bad: CustomTestStringConvertible, Sendable {
        let name: String
        let frames: [WebSocketFrame]
        let code: WebSocketCloseCode
        var testDescription: String { name }
    }

    static let bad: [Bad] = [
        Bad(name: "invalid UTF-8 text frame", frames: [WebSocketFrame(opcode: .text, payload: [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xED, 0xA0, 0x80])], code: 1007),
        Bad(name: "text ending mid-character", frames: [WebSocketFrame(opcode: .text, payload: [0xE2, 0x98])], code: 1007),
        Bad(name: "overlong encoding", frames: [WebSocketFrame(opcode: .text, payload: [0xC0, 0xAF])], code: 1007),
        Bad(name: "code point above U+10FFFF", frames: [WebSocketFrame(opcode: .text, payload: [0xF4, 0x90, 0x80, 0x80])], code: 1007),
        Bad(name: "continuation without start", frames: [WebSocketFrame(opcode: .continuation, payload: [1])], code: 1002),
        Bad(name: "new data frame during fragmented message", frames: [
            WebSocketFrame(fin: false, opcode: .text, payload: [0x41]), WebSocketFrame(opcode: .text, payload: [0x42]),
        ], code: 1002),
        Bad(name: "fragmented control frame", frames: [WebSocketFrame(fin: false, opcode: .ping)], code: 1002),
        Bad(name: "message over the size limit", frames: [
            WebSocketFrame(fin: false, opcode: .binary, payload: Array(repeating: 0, count: 600)),
            WebSocketFrame(fin: true, opcode: .continuation, payload: Array(repeating: 0, count: 600)),
        ], code: 1009),
        Bad(name: "close payload of one byte", frames: [closeFrame([0x03])], code: 1002),
        Bad(name: "close code 999", frames: [closeFrame([0x03, 0xE7])], code: 1002),
        Bad(name: "close code 1004", frames: [closeFrame([0x03, 0xEC])], code: 1002),
        Bad(name: "close code 1005", frames: [closeFrame([0x03, 0xED])], code: 1002),
        Bad(name: "close code 1006", frames: [closeFrame([0x03, 0xEE])], code: 1002),
        Bad(name: "close code 1015", frames: [closeFrame([0x03, 0xF7])], code: 1002),
        Bad(name: "close code 1016", frames: [closeFrame([0x03, 0xF8])], code: 1002),
        Bad(name: "close code 2999", frames: [closeFrame([0x0B, 0xB7])], code: 1002),
        Bad(name: "close code 5000", frames: [closeFrame([0x13, 0x88])], code: 1002),
        Bad(name: "close reason not UTF-8", frames: [closeFrame([0x03, 0xE8, 0xFF])], code: 1007),
    ]

    @Test("violations map to close codes", arguments: bad)
    func violations(_ entry: Bad) {
        let (_, error) = Self.run(entry.frames, maxMessageSize: 1000)
        #expect(error?.closeCode == entry.code)
    }

    @Test("valid close codes are accepted", arguments: [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999] as [UInt16])
    func validCloseCodes(_ code: UInt16) {
        let (messages, error) = Self.run([Self.closeFrame([UInt8(code >> 8), UInt8(code & 0xFF)] + bytes("ok"))])
        #expect(error == nil)
        #expect(messages == [.close(code: WebSocketCloseCode(code), reason: "ok")])
    }

    @Test("an empty close frame has no code")
    func emptyClose() {
        #expect(Self.run([Self.closeFrame([])]).0 == [.close(code: nil, reason: "")])
    }

    @Test("the incremental validator agrees with the standard library")
    func validatorAgrees() {
        var state: UInt64 = 0x1234_5678
        for _ in 0..<2000 {
            var sample: [UInt8] = []
            for _ in 0..<Int(state % 8) {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                sample.append(UInt8(truncatingIfNeeded: state >> 33))
            }
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let expected = String(validating: sample, as: UTF8.self) != nil
            #expect(UTF8Validator.isValid(sample) == expected, "\(sample)")
        }
    }
}
