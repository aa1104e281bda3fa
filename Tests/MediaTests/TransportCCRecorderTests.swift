import Testing
import Wire
@testable import Media

@Suite("Transport-wide CC feedback")
struct TransportCCRecorderTests {
    static func ms(_ v: Double) -> UInt64 { UInt64(v * 1_000_000) }

    @Test("arrivals become one feedback in sequence order, with losses, duplicates and the wrap")
    func feedback() throws {
        var recorder = TransportCCRecorder()
        // 65534, 65535, (0 lost), 1, 3 before 2 (reordered), 2, and 1 again (a duplicate).
        let arrivals: [(UInt16, Double)] = [(65_534, 1_000), (65_535, 1_005), (1, 1_020), (3, 1_030), (2, 1_031), (1, 1_040)]
        for (sequence, at) in arrivals { recorder.record(sequence, now: Self.ms(at)) }
        let reports = recorder.takeFeedback(senderSSRC: 7, mediaSSRC: 9)
        #expect(reports.count == 1)
        let feedback = try #require(reports.first)
        #expect(feedback.baseSequenceNumber == 65_534)
        #expect(feedback.packets.map(\.status) == [.smallDelta, .smallDelta, .notReceived, .smallDelta, .smallDelta, .largeDelta])
        // What a sender reads back after the wire round trip: the arrival gaps, in 250 µs ticks.
        let bytes = try RTCPPacket.transportFeedback(feedback).serialize()
        guard case .transportFeedback(let parsed) = try RTCPPacket.parseCompound(bytes).first else {
            Issue.record("not transport feedback")
            return
        }
        let times = parsed.arrivals.map { ($0.sequenceNumber, $0.arrivalMicroseconds) }
        let start = times[0].1
        #expect(times.map(\.0) == [65_534, 65_535, 1, 2, 3])
        #expect(times.map { $0.1 - start } == [0, 5_000, 20_000, 31_000, 30_000])
        #expect(recorder.takeFeedback(senderSSRC: 7, mediaSSRC: 9).isEmpty, "nothing new, nothing sent")
    }

    @Test("feedback counts up, and a packet arriving after its feedback went is not reported again")
    func lateAndCount() throws {
        var recorder = TransportCCRecorder()
        recorder.record(10, now: Self.ms(100))
        recorder.record(12, now: Self.ms(101))
        let first = try #require(recorder.takeFeedback(senderSSRC: 1, mediaSSRC: 2).first)
        recorder.record(11, now: Self.ms(150))  // late: 11 was already reported missing
        recorder.record(13, now: Self.ms(151))
        let second = try #require(recorder.takeFeedback(senderSSRC: 1, mediaSSRC: 2).first)
        #expect(first.feedbackPacketCount &+ 1 == second.feedbackPacketCount)
        #expect(second.baseSequenceNumber == 13 && second.packets.count == 1)
    }

    @Test("a pause longer than a 16-bit delta starts a second feedback instead of failing")
    func longGap() {
        var recorder = TransportCCRecorder()
        recorder.record(1, now: Self.ms(0))
        recorder.record(2, now: Self.ms(9_000))  // 9 s: beyond ±8.19 s of 250 µs ticks
        let reports = recorder.takeFeedback(senderSSRC: 1, mediaSSRC: 2)
        #expect(reports.map(\.baseSequenceNumber) == [1, 2])
    }
}
