import Testing
@testable import SwitchboardClient

@Suite("Event deduplication and reconnect backoff")
struct EventDeduplicatorTests {
    @Test("an event id at or below the last one of its conversation is a duplicate")
    func duplicates() {
        var seen = EventDeduplicator()
        let arrivals = [("CON-a", 1), ("CON-a", 2), ("CON-a", 2), ("CON-a", 1), ("CON-b", 1), ("CON-a", 5)]
        let accepted = arrivals.map { seen.accept(conversation: $0.0, id: $0.1) }
        #expect(accepted == [true, true, false, false, true, true])
        #expect(seen.lastIDs == ["CON-a": 5, "CON-b": 1])
    }

    @Test("marking a conversation skips the events up to the mark")
    func mark() {
        var seen = EventDeduplicator()
        seen.mark(conversation: "CON-a", upTo: 7)
        let seventh = seen.accept(conversation: "CON-a", id: 7)
        let eighth = seen.accept(conversation: "CON-a", id: 8)
        #expect(!seventh && eighth)
    }

    @Test("delays double up to the maximum, between half and all of each step")
    func backoff() {
        var b = Backoff(first: .milliseconds(500), maximum: .seconds(4))
        do { let d = b.next(unit: 0); #expect(d == .milliseconds(250)) }
        do { let d = b.next(unit: 1); #expect(d == .seconds(1)) }
        do { let d = b.next(unit: 0.5); #expect(d == .milliseconds(1500)) }
        do { let d = b.next(unit: 1); #expect(d == .seconds(4)) }
        do { let d = b.next(unit: 1); #expect(d == .seconds(4)) }
        b.reset()
        do { let d = b.next(unit: 1); #expect(d == .milliseconds(500)) }
    }
}
