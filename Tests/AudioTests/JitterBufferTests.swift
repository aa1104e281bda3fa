import Testing
@testable import Audio

@Suite("Jitter buffer")
struct JitterBufferTests {
    static let ms: UInt64 = 1_000_000

    /// A compact trace of outputs: "p5" packet 5, "c6" conceal 6 (+"f" when FEC data came along), "-" empty.
    static func describe(_ o: JitterOutput) -> String {
        switch o {
        case let .packet(sequence, _, payload):
            precondition(payload.first == UInt8(truncatingIfNeeded: sequence), "payload belongs to another packet")
            return "p\(sequence)"
        case let .conceal(sequence, next): return "c\(sequence)" + (next == nil ? "" : "f")
        case .empty: return "-"
        }
    }

    /// Inserts `sequences` (each arriving at `step` ms intervals, 20 ms of media apart in timestamp),
    /// then pops `pops` ticks.
    static func run(_ sequences: [UInt16], pops: Int, config: JitterBuffer.Configuration = .init()) -> (JitterBuffer, [String], [JitterInsertResult]) {
        var jb = JitterBuffer(config)
        var results: [JitterInsertResult] = []
        for (i, s) in sequences.enumerated() {
            // The timestamp runs on with the sequence number (960 per 20 ms at 48 kHz), across wraps.
            let timestamp = UInt32(truncatingIfNeeded: Int(Int16(bitPattern: s &- sequences[0]))) &* 960
            results.append([UInt8(truncatingIfNeeded: s), 0xAB].withUnsafeBytes {
                jb.insert(sequence: s, timestamp: timestamp, payload: $0, arrival: 1_000 * ms + UInt64(i) * ms)
            })
        }
        var out: [String] = []
        for t in 0..<pops { out.append(describe(jb.pop(now: 1_000 * ms + UInt64(sequences.count) * ms + UInt64(t) * 20 * ms))) }
        return (jb, out, results)
    }

    @Test("reordered, duplicated and gapped arrivals play in order", arguments: [
        ([1, 2, 3, 4], ["p1", "p2", "p3", "p4"]),
        ([3, 1, 2, 4], ["p1", "p2", "p3", "p4"]),
        ([1, 2, 2, 3, 1], ["p1", "p2", "p3"]),
        ([1, 2, 4, 5], ["p1", "p2", "c3f", "p4", "p5"]),
        ([1, 2, 5], ["p1", "p2", "c3", "c4f", "p5"]),
        ([65534, 65535, 0, 1], ["p65534", "p65535", "p0", "p1"]),
        ([65535, 1, 0, 2], ["p65535", "p0", "p1", "p2"]),
        ([32767, 32768, 32769], ["p32767", "p32768", "p32769"]),
    ] as [([UInt16], [String])])
    func order(arrivals: [UInt16], expected: [String]) {
        let (_, out, _) = Self.run(arrivals, pops: expected.count)
        #expect(out == expected)
    }

    @Test("insert results: duplicate of a held packet, duplicate of a played one, late, too large")
    func insertResults() {
        var jb = JitterBuffer()
        func put(_ s: UInt16, _ size: Int = 2, at t: UInt64) -> JitterInsertResult {
            [UInt8](repeating: UInt8(truncatingIfNeeded: s), count: size).withUnsafeBytes { jb.insert(sequence: s, timestamp: UInt32(s) * 960, payload: $0, arrival: t * Self.ms) }
        }
        #expect(put(10, at: 100) == .accepted)
        #expect(put(10, at: 101) == .duplicate)
        #expect(put(12, at: 102) == .accepted)
        #expect(Self.describe(jb.pop(now: 200 * Self.ms)) == "p10")
        #expect(put(10, at: 201) == .duplicate)
        #expect(Self.describe(jb.pop(now: 220 * Self.ms)) == "c11f")
        #expect(put(11, at: 221) == .late)
        #expect(put(13, 1501, at: 222) == .tooLarge)
        let s = jb.statistics
        #expect(s.received == 2 && s.duplicates == 2 && s.late == 1 && s.tooLarge == 1 && s.played == 1 && s.concealed == 1)
    }

    @Test("playout waits for the target delay, then drains and conceals a little before going idle")
    func startAndDry() {
        var jb = JitterBuffer()
        #expect(jb.pop(now: 0) == .empty)
        _ = [UInt8(7)].withUnsafeBytes { jb.insert(sequence: 7, timestamp: 0, payload: $0, arrival: 1_000 * Self.ms) }
        // Target is the 20 ms minimum: one packet buffered is enough.
        #expect(Self.describe(jb.pop(now: 1_000 * Self.ms)) == "p7")
        var trace: [String] = []
        for t in 1...8 { trace.append(Self.describe(jb.pop(now: (1_000 + UInt64(t) * 20) * Self.ms))) }
        #expect(trace == ["c8", "c8", "c8", "c8", "c8", "-", "-", "-"])
        #expect(jb.statistics.underruns == 1)
        // The talker comes back with the next sequence number: it plays, it is not "late".
        _ = [UInt8(8)].withUnsafeBytes { jb.insert(sequence: 8, timestamp: 960 * 50, payload: $0, arrival: 2_000 * Self.ms) }
        #expect(Self.describe(jb.pop(now: 2_000 * Self.ms)) == "p8")
    }

    @Test("jitter grows the target delay toward 200 ms and calm shrinks it back to 20 ms")
    func adapts() {
        var jb = JitterBuffer()
        var random = Signals.Random(state: 42)
        var seq: UInt16 = 0
        var now: UInt64 = 1_000 * Self.ms
        // 10 s of packets sent every 20 ms arriving with up to 120 ms of random delay.
        var pending: [(arrival: UInt64, seq: UInt16)] = []
        var late = 0
        for tick in 0..<500 {
            let sendTime = now
            let delay = UInt64((random.unit() + 1) / 2 * 120) * Self.ms
            pending.append((sendTime + delay, seq))
            seq &+= 1
            pending.sort { $0.arrival < $1.arrival }
            while let first = pending.first, first.arrival <= now {
                pending.removeFirst()
                if [UInt8(truncatingIfNeeded: first.seq)].withUnsafeBytes({ jb.insert(sequence: first.seq, timestamp: UInt32(first.seq) &* 960, payload: $0, arrival: first.arrival) }) == .late { if tick > 250 { late += 1 } }
            }
            _ = jb.pop(now: now)
            now += 20 * Self.ms
        }
        let grown = jb.statistics.targetDelayMilliseconds
        #expect(grown >= 100 && grown <= 200, "target \(grown) ms")
        // Late packets become rare once the buffer has adapted (second half of the run).
        #expect(late < 25, "late in the second half: \(late)")
        // Then 20 s of a perfect network.
        for _ in 0..<1000 {
            _ = [UInt8(truncatingIfNeeded: seq)].withUnsafeBytes { jb.insert(sequence: seq, timestamp: UInt32(seq) &* 960, payload: $0, arrival: now) }
            seq &+= 1
            _ = jb.pop(now: now)
            now += 20 * Self.ms
        }
        #expect(jb.statistics.targetDelayMilliseconds <= 40, "target \(jb.statistics.targetDelayMilliseconds) ms")
        #expect(jb.statistics.bufferedMilliseconds <= 60, "buffered \(jb.statistics.bufferedMilliseconds) ms")
        #expect(jb.statistics.shrinkDrops > 0)
    }

    @Test("the frame a late packet added is given back once the network is calm again")
    func givesBackTheFrame() {
        var jb = JitterBuffer()
        // Packets every 20 ms at 5 ms ± 0.3 ms into each tick's period, ticks at 10 ms: one frame is enough.
        var heldAfterPop: [Int] = []
        for k in 0..<400 {
            let period = UInt64(k) * 20 * Self.ms
            func put(_ n: Int, at arrival: UInt64) {
                _ = [UInt8(truncatingIfNeeded: n)].withUnsafeBytes {
                    jb.insert(sequence: UInt16(n), timestamp: UInt32(n) * 960, payload: $0, arrival: arrival)
                }
            }
            // Packet 50 comes 32 ms into its period: after its tick and the next.
            if k == 52 { put(50, at: period - 8 * Self.ms) }
            if k != 50 { put(k, at: period + 5 * Self.ms + (k % 2 == 0 ? 300_000 : 0)) }
            _ = jb.pop(now: period + 10 * Self.ms)
            heldAfterPop.append(jb.statistics.bufferedMilliseconds)
        }
        #expect(jb.statistics.targetDelayMilliseconds == 20, "sub-frame jitter needs no spare frame")
        #expect(heldAfterPop[40] == 0, "one frame: each packet plays at the first tick after it arrives")
        #expect(heldAfterPop[60] >= 20, "the late packet's stretch holds a frame more")
        #expect(heldAfterPop.suffix(20).allSatisfy { $0 == 0 }, "and that frame is given back: \(heldAfterPop.suffix(20))")
        #expect(jb.statistics.shrinkDrops >= 1)
    }

    @Test("a late packet stretches playout by one concealed frame instead of skipping ahead")
    func lateStretches() {
        var jb = JitterBuffer()
        func put(_ s: UInt16, at t: UInt64) -> JitterInsertResult {
            [UInt8(truncatingIfNeeded: s)].withUnsafeBytes { jb.insert(sequence: s, timestamp: UInt32(s) * 960, payload: $0, arrival: t * Self.ms) }
        }
        _ = put(1, at: 0); _ = put(2, at: 20); _ = put(4, at: 60)
        var trace: [String] = []
        trace.append(Self.describe(jb.pop(now: 60 * Self.ms)))
        trace.append(Self.describe(jb.pop(now: 80 * Self.ms)))
        trace.append(Self.describe(jb.pop(now: 100 * Self.ms)))
        #expect(put(3, at: 101) == .late)
        _ = put(5, at: 102)
        trace.append(Self.describe(jb.pop(now: 120 * Self.ms)))
        trace.append(Self.describe(jb.pop(now: 140 * Self.ms)))
        trace.append(Self.describe(jb.pop(now: 160 * Self.ms)))
        #expect(trace == ["p1", "p2", "c3f", "c3", "p4", "p5"])
        #expect(jb.statistics.targetDelayMilliseconds >= 40)
    }

    @Test("after running dry, a packet older than what already played is late, not replayed")
    func noReplayAfterRebuffering() {
        var jb = JitterBuffer()
        func put(_ s: UInt16, at t: UInt64) -> JitterInsertResult {
            [UInt8(truncatingIfNeeded: s)].withUnsafeBytes { jb.insert(sequence: s, timestamp: UInt32(s) * 960, payload: $0, arrival: t * Self.ms) }
        }
        _ = put(10, at: 0); _ = put(12, at: 1)
        var trace: [String] = []
        for t in 0..<9 { trace.append(Self.describe(jb.pop(now: UInt64(20 + 20 * t) * Self.ms))) }
        #expect(trace == ["p10", "c11f", "p12", "c13", "c13", "c13", "c13", "c13", "-"])
        // Idle and buffering again: 11 is behind what played, 13 is the next one due.
        #expect(put(11, at: 300) == .late)
        #expect(put(13, at: 301) == .accepted)
        #expect(Self.describe(jb.pop(now: 360 * Self.ms)) == "p13")
    }

    @Test("a sequence jump far away restarts the stream; a burst beyond capacity drops the oldest")
    func restartAndOverflow() {
        var config = JitterBuffer.Configuration()
        config.capacity = 8
        let (jb, out, results) = Self.run([100, 101, 20_000, 20_001], pops: 2, config: config)
        #expect(results == [.accepted, .accepted, .restarted, .accepted])
        #expect(out == ["p20000", "p20001"])
        #expect(jb.statistics.restarts == 1)
        let (jb2, out2, _) = Self.run(Array(0..<12), pops: 2, config: config)
        #expect(jb2.statistics.overflowDrops == 4)
        #expect(out2 == ["p4", "p5"])
    }
}
