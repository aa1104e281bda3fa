import Audio
import Testing

@Suite("Loss plan")
struct LossPlanTests {
    /// Feeds the same report `times` times; the plan after each.
    func feed(_ plan: inout LossPlan, _ fraction: UInt8, times: Int) -> [Int32] {
        (0..<times).map { _ in _ = plan.update(fractionLost: fraction); return plan.percent }
    }

    @Test("steps up at once, holds on a step's edge, and comes down only once the reports are clearly lower")
    func steps() {
        var plan = LossPlan()
        #expect(plan.percent == 0)
        #expect(feed(&plan, 0, times: 3) == [0, 0, 0])
        // 12 % lost (31/256): half the way up per report.
        #expect(feed(&plan, 31, times: 4) == [5, 5, 10, 10])
        // 8 %: under 10, not clearly under it, so the plan stays.
        #expect(feed(&plan, 20, times: 5) == [10, 10, 10, 10, 10])
        // No loss at all: a fifth of the way down per report, step by step.
        let falling = feed(&plan, 0, times: 30)
        #expect(falling.first == 10 && falling.last == 0)
        #expect(zip(falling, falling.dropFirst()).allSatisfy { $0 >= $1 }, "never back up on reports of no loss")
        #expect(Set(falling).isSubset(of: Set(LossPlan.steps)))
    }

    @Test("a report of everything lost plans for the top step; update says when the plan changed")
    func extremes() {
        var plan = LossPlan()
        let first = plan.update(fractionLost: 255)
        #expect(first && plan.percent == 30)
        let second = plan.update(fractionLost: 255)
        #expect(!second && plan.percent == 30)
        #expect(LossPlan(percent: 10).percent == 10)
    }
}
