/// Splits fuzz input into pieces whose sizes come from the input itself, so a parser sees the same bytes
/// whole and fed in arbitrary chunks.
struct SplitSource {
    var state: UInt64
    mutating func next(_ bound: Int) -> Int {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Int((state >> 33) % UInt64(max(bound, 1)))
    }
}

/// Chunks of at most `maxPiece` bytes, sizes drawn from `seed`.
func pieces(_ input: ArraySlice<UInt8>, seed: UInt8, maxPiece: Int) -> [ArraySlice<UInt8>] {
    var source = SplitSource(state: UInt64(seed) &+ 1)
    var result: [ArraySlice<UInt8>] = []
    var index = input.startIndex
    while index < input.endIndex {
        let size = min(1 + source.next(maxPiece), input.endIndex - index)
        result.append(input[index..<(index + size)])
        index += size
    }
    return result
}
