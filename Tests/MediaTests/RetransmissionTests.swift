import Testing
@testable import Media

@Suite("Retransmission buffer and NACK generation")
struct RetransmissionTests {
    func packet(_ sequence: UInt16, size: Int = 100) -> [UInt8] {
        var bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: sequence), count: size)
        bytes[0] = 0x80
        bytes[2] = UInt8(sequence >> 8)
        bytes[3] = UInt8(truncatingIfNeeded: sequence)
        return bytes
    }

    @Test("a stored packet is served back byte for byte while fresh")
    func roundTrip() throws {
        let buffer = RetransmissionBuffer(slots: 64, maxAge: ms(1_000))
        let p = packet(65_535)
        p.withUnsafeBytes { buffer.store($0.baseAddress!, length: $0.count, sequenceNumber: 65_535, now: ms(10)) }
        let got = try #require(buffer.packet(65_535, now: ms(500)))
        #expect(Array(got) == p)
        #expect(buffer.contains(65_535, now: ms(500)))
    }

    @Test("packets expire by age (1 s audio, 2 s video)", arguments: [(UInt64(1_000), true), (2_000, false)])
    func expiry(maxAge: UInt64, audio: Bool) {
        let buffer = RetransmissionBuffer(slots: audio ? 64 : 1024, maxAge: ms(maxAge))
        let p = packet(7)
        p.withUnsafeBytes { buffer.store($0.baseAddress!, length: $0.count, sequenceNumber: 7, now: ms(100)) }
        #expect(buffer.packet(7, now: ms(100 + maxAge)) != nil)
        #expect(buffer.packet(7, now: ms(101 + maxAge)) == nil)
    }

    @Test("a slot reused by a newer packet does not answer for the old number")
    func slotReuse() {
        let buffer = RetransmissionBuffer(slots: 64, maxAge: ms(10_000))
        for s in UInt16(0)..<70 {
            let p = packet(s)
            p.withUnsafeBytes { buffer.store($0.baseAddress!, length: $0.count, sequenceNumber: s, now: ms(1)) }
        }
        #expect(buffer.packet(3, now: ms(2)) == nil)
        #expect(buffer.packet(67, now: ms(2)) != nil)
    }

    @Test("a gap produces NACKs after the reorder grace, retried at most every RTT, and is cleared by arrival")
    func gaps() {
        var nack = NackGenerator()
        _ = nack.received(65_534, now: ms(0))
        _ = nack.received(2, now: ms(1))  // 65535, 0, 1 missing across the wrap
        let early = nack.due(now: ms(2), rtt: ms(50))
        #expect(early.isEmpty, "reorder grace")
        let first = nack.due(now: ms(20), rtt: ms(50))
        #expect(first == [65_535, 0, 1])
        let tooSoon = nack.due(now: ms(40), rtt: ms(50))
        #expect(tooSoon.isEmpty, "not again before an RTT")
        let arrival = nack.received(0, now: ms(45))
        #expect(arrival == .recovered)
        let retry = nack.due(now: ms(80), rtt: ms(50))
        #expect(retry == [65_535, 1])
    }

    @Test("a packet is given up after 10 tries or 1 s")
    func giveUp() {
        var nack = NackGenerator()
        _ = nack.received(1, now: 0)
        _ = nack.received(3, now: 0)
        var sent = 0
        var t: UInt64 = ms(20)
        while t < ms(2_000) {
            sent += nack.due(now: t, rtt: 0).count
            t += ms(25)
        }
        #expect(sent == NackGenerator.maxRetries)
        #expect(nack.missing.isEmpty)
    }

    @Test("a gap too large to repair asks for a key frame instead")
    func hugeGap() {
        var nack = NackGenerator()
        _ = nack.received(1, now: 0)
        let update = nack.received(2_000, now: 0)
        #expect(update == .gapTooLarge)
        #expect(nack.missing.isEmpty)
    }
}
