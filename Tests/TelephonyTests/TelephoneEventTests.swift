import Testing
@testable import Telephony

@Suite("RFC 4733 telephone events and the RTP port pool")
struct TelephoneEventTests {
    @Test("payload round trip: event, end bit, volume, duration")
    func roundTrip() throws {
        let event = TelephoneEvent(event: 11, end: true, volume: 10, duration: 1600)
        var bytes = [UInt8](repeating: 0, count: 4)
        bytes.withUnsafeMutableBytes { event.write(to: $0) }
        #expect(bytes == [11, 0x8A, 0x06, 0x40])
        let parsed = try #require(bytes.withUnsafeBytes { TelephoneEvent($0) })
        #expect(parsed == event)
    }

    @Test("short or out-of-range payloads are refused")
    func refused() {
        #expect([UInt8]([1, 2, 3]).withUnsafeBytes { TelephoneEvent($0) } == nil)
        #expect([UInt8]([200, 0, 0, 0]).withUnsafeBytes { TelephoneEvent($0) } == nil)
    }

    @Test("digits map to event codes and back", arguments: Array("0123456789*#ABCD"))
    func digits(digit: Character) throws {
        let code = try #require(TelephoneEvent.code(of: digit))
        #expect(TelephoneEvent.digit(of: code) == digit)
    }

    @Test("the pool hands out even ports, skips ones that fail to bind, and runs out")
    func pool() {
        let pool = RTPPortPool(range: 30_001...30_008)
        #expect(pool.range.lowerBound == 30_002)
        var got: [UInt16] = []
        while let p = pool.acquire({ $0 != 30_004 }) { got.append(p) }
        #expect(got.sorted() == [30_002, 30_006])
        #expect(got.allSatisfy { $0 % 2 == 0 })
        pool.release(30_002)
        #expect(pool.acquire { $0 != 30_004 } == 30_002)
    }
}
