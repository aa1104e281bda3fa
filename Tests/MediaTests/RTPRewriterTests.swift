import Testing
@testable import Media

@Suite("Consumer sequence and timestamp rewriting")
struct RTPRewriterTests {
    @Test("output stays contiguous across the 16-bit wrap", arguments: [UInt16(0), 32_767, 32_768, 65_535, 65_530])
    func wrap(start: UInt16) {
        var rewriter = RTPRewriter(clockRate: 48_000, initialSequence: start, initialTimestamp: 4_294_967_000)
        var input: UInt16 = 12_345
        var inTimestamp: UInt32 = 1_000
        var expected = start
        for i in 0..<20 {
            let out = rewriter.rewrite(sequence: input, timestamp: inTimestamp, now: ms(UInt64(20 * i)))
            #expect(out?.sequence == expected)
            input &+= 1
            inTimestamp &+= 960
            expected &+= 1
        }
    }

    @Test("input wrapping at 65535 maps onto a continuous output", arguments: [UInt16(65_530), 32_760])
    func inputWrap(first: UInt16) {
        var rewriter = RTPRewriter(clockRate: 90_000, initialSequence: 100, initialTimestamp: 0)
        var previous: UInt16?
        var s = first
        for _ in 0..<12 {
            let out = rewriter.rewrite(sequence: s, timestamp: 0, now: 0)!.sequence
            if let previous { #expect(out == previous &+ 1) }
            previous = out
            s &+= 1
        }
    }

    @Test("after a pause the stream continues at last + 1 with the timestamp advanced by wall time")
    func resumeContinuity() {
        var rewriter = RTPRewriter(clockRate: 48_000, initialSequence: 500, initialTimestamp: 10_000)
        _ = rewriter.rewrite(sequence: 1, timestamp: 0, now: ms(0))
        let last = rewriter.rewrite(sequence: 2, timestamp: 960, now: ms(20))!
        rewriter.resync()
        // The producer moved on by 3000 packets meanwhile (or this is another producer).
        let resumed = rewriter.rewrite(sequence: 3_002, timestamp: 7_777_777, now: ms(1_020))!
        #expect(resumed.sequence == last.sequence &+ 1)
        #expect(resumed.timestamp == last.timestamp &+ 48_000)
        let next = rewriter.rewrite(sequence: 3_003, timestamp: 7_777_777 &+ 960, now: ms(1_040))!
        #expect(next.sequence == resumed.sequence &+ 1)
        #expect(next.timestamp == resumed.timestamp &+ 960)
    }

    @Test("packets older than the epoch start are dropped, reordered later ones are mapped")
    func epochBoundary() {
        var rewriter = RTPRewriter(clockRate: 90_000, initialSequence: 0, initialTimestamp: 0)
        let first = rewriter.rewrite(sequence: 1_000, timestamp: 0, now: 0)!
        let old = rewriter.rewrite(sequence: 999, timestamp: 0, now: 0)
        #expect(old == nil)
        _ = rewriter.rewrite(sequence: 1_002, timestamp: 0, now: 0)
        let reordered = rewriter.rewrite(sequence: 1_001, timestamp: 0, now: 0)
        #expect(reordered?.sequence == first.sequence &+ 1)
    }

    @Test("dropped packets leave no gap; late packets get the numbers they would have had; NACKs map around the drops")
    func drops() {
        var rewriter = RTPRewriter(clockRate: 90_000, initialSequence: 65_534, initialTimestamp: 0)
        func out(_ s: UInt16) -> UInt16? { rewriter.rewrite(sequence: s, timestamp: 0, now: 0)?.sequence }
        // 100 101 (102 dropped) 103 (104 dropped) 106 105: outputs run on without gaps, 105 arriving after 106.
        rewriter.drop(sequence: 99)  // before the epoch's first packet: nothing to move
        #expect(out(100) == 65_534)
        #expect(out(101) == 65_535)
        rewriter.drop(sequence: 102)
        #expect(out(103) == 0)
        rewriter.drop(sequence: 104)
        #expect(out(106) == 2)
        #expect(out(105) == 1)
        rewriter.drop(sequence: 101)  // late, and already numbered: nothing moves
        #expect(out(107) == 3)
        for (output, input) in [(UInt16(65_534), UInt16(100)), (65_535, 101), (0, 103), (1, 105), (2, 106), (3, 107)] {
            #expect(rewriter.inputSequence(for: output) == input, "output \(output)")
        }
        #expect(rewriter.inputSequence(for: 4) == nil, "not sent yet")
        // Past the drops remembered, what came before the oldest of them cannot be numbered: a NACK for it goes
        // unanswered, a late packet from then is left out.
        let next = 108 + UInt16(RTPRewriter.dropMemory)
        for s in UInt16(108)..<next { rewriter.drop(sequence: s) }
        #expect(rewriter.inputSequence(for: 3) == nil)
        #expect(out(next) == 4)
        #expect(rewriter.inputSequence(for: 4) == next)
        // A new epoch forgets them.
        rewriter.resync()
        #expect(out(500) == 5)
        #expect(out(502) == 7)
        #expect(out(501) == 6)
    }

    @Test("a random stream with a layer left out, losses and reordering: outputs keep input order, skip only what was lost or left out too late, and map back",
          arguments: [UInt64(1), 2, 3, 42, 7_777, 65_537])
    func randomDrops(seed: UInt64) {
        var random = FastRandom(seed: seed)
        let base = UInt16(truncatingIfNeeded: random.next())
        let count = 4_000
        // Each packet of a layer left out (40 %) or sent; 2 % lost on the way; now and then two arrive swapped.
        let leftOut = (0..<count).map { _ in random.unit() < 0.4 }
        var arrivals = (0..<count).filter { _ in random.unit() >= 0.02 }
        var i = 1
        while i < arrivals.count {
            if random.unit() < 0.05 {
                arrivals.swapAt(i - 1, i)
                i += 2
            } else {
                i += 1
            }
        }
        var rewriter = RTPRewriter(clockRate: 90_000, initialSequence: UInt16(truncatingIfNeeded: random.next()), initialTimestamp: 0)
        var outputs: [(index: Int, sequence: UInt16)] = []
        var unused = Set<Int>()  // left out, but arrived when its number could no longer be given back
        var newest = -1
        for index in arrivals {
            let sequence = base &+ UInt16(truncatingIfNeeded: index)
            if leftOut[index] {
                if outputs.isEmpty || index < newest { unused.insert(index) }
                rewriter.drop(sequence: sequence)
            } else if let out = rewriter.rewrite(sequence: sequence, timestamp: 0, now: 0) {
                outputs.append((index, out.sequence))
            } else {
                continue
            }
            if !outputs.isEmpty { newest = max(newest, index) }
        }
        let arrived = Set(arrivals)
        let sorted = outputs.sorted { $0.index < $1.index }
        #expect(sorted.count > count / 2)
        var mismatches = 0
        for (a, b) in zip(sorted, sorted.dropFirst()) {
            // Between two sent packets, a number for each packet sent or lost on the way, and for each left out too late.
            let expected = (a.index + 1...b.index).count { !leftOut[$0] || !arrived.contains($0) || unused.contains($0) }
            if Int(b.sequence &- a.sequence) != expected { mismatches += 1 }
        }
        #expect(mismatches == 0)
        // The latest packets' numbers map back to them (a NACK for one is answered with it).
        for sent in sorted.suffix(10) {
            #expect(rewriter.inputSequence(for: sent.sequence) == base &+ UInt16(truncatingIfNeeded: sent.index))
        }
    }

    @Test("NACKed output numbers map back to producer numbers only inside the current epoch")
    func mapBack() {
        var rewriter = RTPRewriter(clockRate: 90_000, initialSequence: 65_534, initialTimestamp: 0)
        for s in UInt16(10)...20 { _ = rewriter.rewrite(sequence: s, timestamp: 0, now: 0) }
        #expect(rewriter.inputSequence(for: 65_534) == 10)
        #expect(rewriter.inputSequence(for: 2) == 14)
        #expect(rewriter.inputSequence(for: 8) == 20)
        #expect(rewriter.inputSequence(for: 9) == nil, "not sent yet")
        #expect(rewriter.inputSequence(for: 65_533) == nil, "before the epoch")
    }
}
