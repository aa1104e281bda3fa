// fuzz-sources: Sources/Wire
// Feeds arbitrary bytes to WebSocketFrameParser whole and in input-derived pieces (the
// runs must agree), round-trips every frame through serialize -> parse, and pushes the
// frames through WebSocketMessageAssembler.

struct SplitSource {
    var state: UInt64
    mutating func next(_ bound: Int) -> Int {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Int((state >> 33) % UInt64(max(bound, 1)))
    }
}

func pieces(_ input: ArraySlice<UInt8>, seed: UInt8) -> [ArraySlice<UInt8>] {
    var source = SplitSource(state: UInt64(seed) &+ 1)
    var result: [ArraySlice<UInt8>] = []
    var index = input.startIndex
    let maxPiece = seed & 0x80 != 0 ? 3 : 40
    while index < input.endIndex {
        let size = min(1 + source.next(maxPiece), input.endIndex - index)
        result.append(input[index..<(index + size)])
        index += size
    }
    return result
}

func makeParser(_ knobs: UInt8) -> WebSocketFrameParser {
    var parser = WebSocketFrameParser(role: knobs & 1 == 0 ? .server : .client, maxFrameSize: 1 << Int(knobs >> 4))
    parser.allowedReservedBits = knobs & 2 == 0 ? 0 : 0x70
    return parser
}

func run(_ chunks: [ArraySlice<UInt8>], knobs: UInt8) -> ([WebSocketFrame], WebSocketError?) {
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

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 2 else { return 0 }
    let all = Array(UnsafeBufferPointer(start: data, count: size))
    let seed = all[0]
    let knobs = all[1]
    let input = all[2...]

    let whole = run([input], knobs: knobs)
    let split = run(pieces(input, seed: seed), knobs: knobs)
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
