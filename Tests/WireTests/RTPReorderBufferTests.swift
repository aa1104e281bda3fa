import Testing
@testable import Wire

@Suite("RTP reorder buffer")
struct RTPReorderBufferTests {
    typealias Buffer = RTPReorderBuffer<UInt16>

    /// Everything `pop` gives at `now`, as (sequence, gapBefore).
    static func drain(_ buffer: inout Buffer, now: UInt64) -> [(UInt16, Bool)] {
        var out: [(UInt16, Bool)] = []
        while let (sequence, element, gap) = buffer.pop(now: now) {
            #expect(sequence == element)
            out.append((sequence, gap))
        }
        return out
    }

    static func sequences(_ popped: [(UInt16, Bool)]) -> [UInt16] { popped.map(\.0) }

    @Test("packets in order come straight out, with no gaps")
    func inOrder() {
        var buffer = Buffer(maxWait: 100)
        var out: [(UInt16, Bool)] = []
        for s: UInt16 in 1...5 {
            let taken = buffer.insert(sequence: s, arrival: 0, s)
            #expect(taken)
            out += Self.drain(&buffer, now: 0)
        }
        #expect(Self.sequences(out) == [1, 2, 3, 4, 5])
        #expect(out.allSatisfy { !$0.1 })
        #expect(buffer.isEmpty && buffer.lost == 0 && buffer.dropped == 0)
    }

    @Test("a packet ahead of a missing one waits for it, then both come out in order")
    func reorder() {
        var buffer = Buffer(maxWait: 1_000)
        _ = buffer.insert(sequence: 10, arrival: 0, 10)
        #expect(Self.sequences(Self.drain(&buffer, now: 0)) == [10])
        _ = buffer.insert(sequence: 12, arrival: 10, 12)
        _ = buffer.insert(sequence: 13, arrival: 20, 13)
        #expect(Self.drain(&buffer, now: 20).isEmpty)
        #expect(buffer.count == 2)
        _ = buffer.insert(sequence: 11, arrival: 30, 11)
        let out = Self.drain(&buffer, now: 30)
        #expect(Self.sequences(out) == [11, 12, 13])
        #expect(out.allSatisfy { !$0.1 })
        #expect(buffer.lost == 0)
    }

    @Test("with a start wait, the first packet is held that long, so one from before it that arrives late still comes first")
    func startWait() {
        var buffer = Buffer(capacity: 8, maxWait: 100, startWait: 100)
        let taken = [buffer.insert(sequence: 11, arrival: 0, 11), buffer.insert(sequence: 12, arrival: 10, 12)]
        #expect(taken == [true, true])
        #expect(Self.drain(&buffer, now: 50).isEmpty)
        let late = buffer.insert(sequence: 10, arrival: 60, 10)
        #expect(late)
        #expect(Self.sequences(Self.drain(&buffer, now: 101)) == [10, 11, 12])
        #expect(buffer.lost == 0 && buffer.dropped == 0)
        // Once started, packets in order come straight out.
        let next = buffer.insert(sequence: 13, arrival: 102, 13)
        #expect(next)
        #expect(Self.sequences(Self.drain(&buffer, now: 102)) == [13])
    }

    @Test("before anything is released, a packet from before the first one is still taken")
    func earlierThanFirst() {
        var buffer = Buffer(maxWait: 1_000)
        _ = buffer.insert(sequence: 101, arrival: 0, 101)
        let taken = buffer.insert(sequence: 100, arrival: 1, 100)
        #expect(taken)
        #expect(Self.sequences(Self.drain(&buffer, now: 1)) == [100, 101])
    }

    @Test("a duplicate is refused and counted, held or already released")
    func duplicate() {
        var buffer = Buffer(maxWait: 1_000)
        _ = buffer.insert(sequence: 5, arrival: 0, 5)
        _ = Self.drain(&buffer, now: 0)
        _ = buffer.insert(sequence: 7, arrival: 0, 7)
        let heldAgain = buffer.insert(sequence: 7, arrival: 1, 7)
        #expect(!heldAgain)
        let releasedAgain = buffer.insert(sequence: 5, arrival: 1, 5)
        #expect(!releasedAgain)
        #expect(buffer.dropped == 2)
        #expect(buffer.count == 1)
    }

    @Test("a packet behind one already released is late: refused and counted")
    func late() {
        var buffer = Buffer(maxWait: 10)
        _ = buffer.insert(sequence: 100, arrival: 0, 100)
        _ = buffer.insert(sequence: 102, arrival: 0, 102)
        #expect(Self.sequences(Self.drain(&buffer, now: 11)) == [100, 102])
        let justBehind = buffer.insert(sequence: 101, arrival: 12, 101)
        #expect(!justBehind)
        let farBehind = buffer.insert(sequence: 99, arrival: 12, 99)
        #expect(!farBehind)
        #expect(buffer.dropped == 2)
        let nextOne = buffer.insert(sequence: 103, arrival: 12, 103)
        #expect(nextOne)
    }

    @Test("a gap is skipped once the oldest held packet has waited more than maxWait")
    func gapAfterMaxWait() {
        var buffer = Buffer(maxWait: 50)
        _ = buffer.insert(sequence: 1, arrival: 0, 1)
        _ = Self.drain(&buffer, now: 0)
        _ = buffer.insert(sequence: 4, arrival: 100, 4)
        _ = buffer.insert(sequence: 5, arrival: 120, 5)
        #expect(Self.drain(&buffer, now: 150).isEmpty, "waited exactly maxWait")
        let out = Self.drain(&buffer, now: 151)
        #expect(Self.sequences(out) == [4, 5])
        #expect(out.map(\.1) == [true, false])
        #expect(buffer.lost == 2)
        // What was skipped is late now.
        let taken = buffer.insert(sequence: 3, arrival: 160, 3)
        #expect(!taken)
    }

    @Test("the oldest held packet is the one that arrived first, not the lowest number")
    func oldestByArrival() {
        var buffer = Buffer(maxWait: 50)
        _ = buffer.insert(sequence: 1, arrival: 0, 1)
        _ = Self.drain(&buffer, now: 0)
        _ = buffer.insert(sequence: 5, arrival: 100, 5)
        _ = buffer.insert(sequence: 3, arrival: 140, 3)
        #expect(Self.sequences(Self.drain(&buffer, now: 151)) == [3, 5])
        #expect(buffer.lost == 2)
    }

    @Test("sequence numbers wrap from 65535 to 0 in order", arguments: [UInt16(0), 32_767, 32_768, 65_530, 65_535])
    func wrap(start: UInt16) {
        var buffer = Buffer(maxWait: 1_000)
        let sent = (0..<20).map { start &+ UInt16($0) }
        // After the first, every pair arrives reversed.
        var arriving = sent
        for i in stride(from: 1, to: arriving.count - 1, by: 2) { arriving.swapAt(i, i + 1) }
        var out: [(UInt16, Bool)] = []
        for s in arriving {
            let taken = buffer.insert(sequence: s, arrival: 0, s)
            #expect(taken)
            out += Self.drain(&buffer, now: 0)
        }
        #expect(Self.sequences(out) == sent)
        #expect(buffer.lost == 0 && buffer.dropped == 0)
    }

    @Test("a gap across the wrap counts the numbers skipped")
    func gapAcrossWrap() {
        var buffer = Buffer(maxWait: 10)
        _ = buffer.insert(sequence: 65_534, arrival: 0, 65_534)
        _ = Self.drain(&buffer, now: 0)
        _ = buffer.insert(sequence: 1, arrival: 0, 1)
        let out = Self.drain(&buffer, now: 11)
        #expect(out.count == 1 && out[0] == (1, true))
        #expect(buffer.lost == 2, "65535 and 0")
        let taken = buffer.insert(sequence: 65_535, arrival: 12, 65_535)
        #expect(!taken)
    }

    @Test("a full buffer skips its gap at once and refuses more; a packet far ahead forces a skip")
    func capacity() {
        var buffer = Buffer(capacity: 4, maxWait: 1_000_000)
        _ = buffer.insert(sequence: 1, arrival: 0, 1)
        _ = Self.drain(&buffer, now: 0)
        for s: UInt16 in 3...5 { _ = buffer.insert(sequence: s, arrival: 0, s) }
        #expect(Self.drain(&buffer, now: 0).isEmpty)
        _ = buffer.insert(sequence: 6, arrival: 0, 6)
        let taken = buffer.insert(sequence: 7, arrival: 0, 7)
        #expect(!taken, "never more than capacity")
        #expect(buffer.count == 4 && buffer.dropped == 1)
        let out = Self.drain(&buffer, now: 0)
        #expect(Self.sequences(out) == [3, 4, 5, 6])
        #expect(out[0].1 && buffer.lost == 1)

        // 6 released, 7 missing: 8 waits. 13 is 6 ahead of 7, and still 4 ahead of 9 once
        // 8 is out: with capacity 4 both gaps are skipped at once.
        _ = buffer.insert(sequence: 8, arrival: 0, 8)
        #expect(Self.drain(&buffer, now: 0).isEmpty)
        _ = buffer.insert(sequence: 13, arrival: 0, 13)
        let skipped = Self.drain(&buffer, now: 0)
        #expect(Self.sequences(skipped) == [8, 13])
        #expect(skipped.map(\.1) == [true, true])
        #expect(buffer.lost == 1 + 1 + 4)
        // 3 ahead of the next expected is within the window: it waits.
        _ = buffer.insert(sequence: 17, arrival: 0, 17)
        #expect(Self.drain(&buffer, now: 0).isEmpty)
    }

    @Test("flush gives everything held, in order, gaps marked")
    func flush() {
        var buffer = Buffer(maxWait: 1_000)
        _ = buffer.insert(sequence: 4, arrival: 0, 4)
        _ = Self.drain(&buffer, now: 0)
        for s: UInt16 in [8, 5, 7] { _ = buffer.insert(sequence: s, arrival: 0, s) }
        let held = buffer.flush()
        #expect(held.map(\.sequence) == [5, 7, 8])
        #expect(held.map(\.element) == [5, 7, 8])
        #expect(held.map(\.gapBefore) == [false, true, false])
        #expect(buffer.isEmpty && buffer.lost == 1)
        #expect(buffer.flush().isEmpty)
        let taken = buffer.insert(sequence: 9, arrival: 0, 9)
        #expect(taken)
        #expect(Self.sequences(Self.drain(&buffer, now: 0)) == [9])
    }

    @Test("a long shuffled stream comes out whole and in order, through the wrap")
    func shuffledStream() {
        var buffer = Buffer(capacity: 64, maxWait: 1_000)
        let sent = (0..<3_000).map { UInt16(truncatingIfNeeded: 64_000 + $0) }
        var arriving = sent
        var state: UInt64 = 7
        for i in 0..<(arriving.count - 8) {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            if state >> 62 == 0 { arriving.swapAt(i, i + 1 + Int((state >> 33) % 7)) }
        }
        var out: [UInt16] = []
        for (i, s) in arriving.enumerated() {
            _ = buffer.insert(sequence: s, arrival: UInt64(i), s)
            out += Self.sequences(Self.drain(&buffer, now: UInt64(i)))
        }
        out += buffer.flush().map(\.sequence)
        #expect(out == sent)
        #expect(buffer.lost == 0 && buffer.dropped == 0)
    }
}
