// Feeds arbitrary bytes to WebSocketFrameParser whole and in input-derived pieces (the
// runs must agree), round-trips every frame through serialize -> parse, and pushes the
// frames through WebSocketMessageAssembler.

fileprivate func makeParser(_ knobs: UInt8) -> WebSocketFrameParser {
    var parser = WebSocketFrameParser(role: knobs & 1 == 0 ? .server : .client, maxFrameSize: 1 << Int(knobs >> 4))
    parser.allowedReservedBits = knobs & 2 == 0 ? 0 : 0x70
    return parser
}

fileprivate func run(_ chunks: [ArraySlice<UInt8>], knobs: UInt8) -> ([WebSocketFrame], WebSocketError?) {
    var parser = makeParser(knobs)
    var frames: [WebSocketFrame] = []
    for chunk in chunks {
        parser.append(contentsOf: chunk)
        do {
            while let frame = try parser.next() { frames.append(frame) }
        } catch {
            return (frames, error)
        }
    }
    return (frames, nil)
}

/// One fuzz input for the WebSocketFrame target.
func fuzzWebSocketFrame(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 2 else { return 0 }
    let all = Array(UnsafeBufferPointer(start: data, count: size))
    let seed = all[0]
    let knobs = all[1]
    let input = all[2...]

    let whole = run([input], knobs: knobs)
    let split = run(pieces(input, seed: seed, maxPiece: seed & 0x80 != 0 ? 3 : 40), knobs: knobs)
    precondition(whole.0 == split.0, "split changed frames")
    precondition(whole.1 == split.1, "split changed the error")

    let parser = makeParser(knobs)
    var assembler = WebSocketMessageAssembler(maxMessageSize: 1 << Int(knobs >> 3 & 0x1F))
    for frame in whole.0 {
        precondition(frame.masked == (parser.role == .server), "mask direction not enforced")
        precondition(!frame.opcode.isControl || (frame.fin && frame.payload.count <= 125), "bad control frame passed")
        var again = makeParser(knobs)
        again.append(contentsOf: frame.serialized())
        let reparsed = try? again.next()
        precondition(reparsed == frame, "frame did not round-trip")
        precondition(again.bufferedByteCount == 0, "serializer wrote trailing bytes")
        do {
            if case .text(let text)? = try assembler.push(frame) {
                precondition(UTF8Validator.isValid(Array(text.utf8)))
            }
        } catch {
            precondition([1002, 1007, 1009].contains(error.closeCode.rawValue))
            break
        }
    }
    return 0
}
