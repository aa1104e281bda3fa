import Testing
@testable import Media

@Suite("Producer tap ring")
struct ProducerTapTests {
    private func capture(_ tap: ProducerTap, _ bytes: [UInt8], sequence: UInt16, marker: Bool = false, now: UInt64 = 0) {
        bytes.withUnsafeBytes { tap.capture($0.baseAddress!, length: bytes.count, sequence: sequence, timestamp: UInt32(sequence) * 3_000,
                                            marker: marker, now: now) }
    }

    @Test("a drain returns each payload with its header fields in arrival order, then nothing")
    func drainsInArrivalOrder() {
        let tap = ProducerTap(id: ProducerTapID("t"), capacity: 4)
        capture(tap, [1, 2, 3], sequence: 7, now: 10)
        capture(tap, [4], sequence: 9, marker: true, now: 11)
        capture(tap, [5, 6], sequence: 8, now: 12)
        let out = tap.drain(codec: "VP8", clockRate: 90_000)
        #expect(out.packets.map(\.sequence) == [7, 9, 8])
        #expect(out.packets.map(\.marker) == [false, true, false])
        #expect(out.packets.map(\.arrival) == [10, 11, 12])
        #expect(out.packets.map(\.timestamp) == [21_000, 27_000, 24_000])
        #expect(out.packets.map { Array(out.bytes[$0.range]) } == [[1, 2, 3], [4], [5, 6]])
        #expect((out.codec, out.clockRate, out.dropped) == ("VP8", 90_000, 0))
        #expect(tap.drain(codec: "VP8", clockRate: 90_000).packets.isEmpty)
    }

    @Test("a full ring drops the newest and counts them; after a drain it takes packets again, wrapping")
    func fullRingDrops() {
        let tap = ProducerTap(id: ProducerTapID("t"), capacity: 3)
        for s in 0..<5 { capture(tap, [UInt8(s)], sequence: UInt16(s)) }
        var out = tap.drain(codec: "opus", clockRate: 48_000)
        #expect(out.packets.map(\.sequence) == [0, 1, 2] && out.dropped == 2)
        for s in 5..<7 { capture(tap, [UInt8(s)], sequence: UInt16(s)) }
        out = tap.drain(codec: "opus", clockRate: 48_000)
        #expect(out.packets.map { out.bytes[$0.range.lowerBound] } == [5, 6] && out.dropped == 2)
    }

    @Test("a payload longer than a slot is dropped, never written past it")
    func oversizedPayload() {
        let tap = ProducerTap(id: ProducerTapID("t"), capacity: 2)
        capture(tap, [UInt8](repeating: 1, count: ProducerTap.maxPayload + 1), sequence: 1)
        capture(tap, [UInt8](repeating: 2, count: ProducerTap.maxPayload), sequence: 2)
        let out = tap.drain(codec: "VP8", clockRate: 90_000)
        #expect(out.packets.map(\.sequence) == [2] && out.bytes.count == ProducerTap.maxPayload && out.dropped == 1)
    }
}
