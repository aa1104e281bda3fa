// NCCO engine overhead per action: what the server spends between an answer webhook's body arriving
// and each action's first step, with no I/O. The engine is pure (time passed in, steps returned), so
// this is the whole of its cost; webhooks, media and SIP are measured by scripts/bench-calls.
// Run release builds only (scripts/bench-calls builds and runs this first).
import Foundation
import Live
import Wire

func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }

/// Best of `rounds` runs of `iterations` calls: other work on the machine only ever slows a round.
/// What `body` returns is summed and printed at the end, so the optimizer cannot drop the work.
func measure(_ iterations: Int, rounds: Int = 5, _ body: () -> Int) -> Double {
    let clock = ContinuousClock()
    var best = Double.infinity
    var sink = 0
    for _ in 0..<rounds {
        let start = clock.now
        for _ in 0..<iterations { sink &+= body() }
        best = min(best, seconds(clock.now - start) / Double(iterations))
    }
    if sink == 42 { print("") }
    return best
}

func row(_ name: String, _ actions: Int, _ perDocument: Double) {
    let ns = perDocument * 1e9
    let cells = [name, String(actions),
                 String(format: "%.0f", ns), String(format: "%.0f", ns / Double(actions))]
    print("| " + cells.joined(separator: " | ") + " |")
}

let now = Date(timeIntervalSince1970: 1_800_000_000)
let documents: [(String, String)] = [
    ("talk (the benchmark's answer)", #"[{"action":"talk","text":"hi"}]"#),
    ("conversation by name", #"[{"action":"conversation","name":"room-1"}]"#),
    ("tutorial: talk, then connect to a phone",
     #"[{"action":"talk","text":"Please wait while we connect you."},{"action":"connect","from":"15550142","endpoint":[{"type":"phone","number":"15557654321"}]}]"#),
    ("every action kind once (7)",
     #"[{"action":"record","format":"mp3","beepStart":true},{"action":"talk","text":"Hello","language":"en-US","bargeIn":true},"#
        + #"{"action":"stream","streamUrl":["https://example.test/a.mp3"],"loop":2},{"action":"input","type":["dtmf"],"dtmf":{"maxDigits":4,"timeOut":5,"submitOnHash":true},"eventUrl":["https://example.test/in"]},"#
        + #"{"action":"notify","payload":{"step":1},"eventUrl":["https://example.test/n"]},"#
        + #"{"action":"connect","timeout":30,"endpoint":[{"type":"phone","number":"15557654321"}]},{"action":"conversation","name":"after","endOnExit":true}]"#),
]
let talks20 = "[" + (0..<20).map { #"{"action":"talk","text":"line \#($0)"}"# }.joined(separator: ",") + "]"

print("NCCO engine, best of 5 rounds, \(ProcessInfo.processInfo.activeProcessorCount) CPUs")
print("")
print("| document | actions | ns per document | ns per action |")
print("|---|---:|---:|---:|")

// 1. The answer webhook's body to the first step: JSON text → validated NCCO → engine loaded.
for (name, text) in documents + [("20 talks", talks20)] {
    let bytes = Array(text.utf8)
    let count = (try? NCCO.parse(bytes))?.actions.count ?? 0
    precondition(count > 0, "benchmark document does not parse: \(name)")
    let t = measure(20_000) {
        guard let ncco = try? NCCO.parse(bytes) else { return 0 }
        var engine = NCCOEngine()
        return engine.load(ncco, now: now).count
    }
    row("JSON body → validated → first step: " + name, count, t)
}

// 2. Validation alone (decoded JSON → typed actions), and the engine alone (load + every action run to the end).
let twenty = try! JSONParser.parse(talks20)
let parsed = try! NCCO.parse(twenty)
row("validation only (decoded JSON → actions): 20 talks", 20, measure(20_000) { (try? NCCO.parse(twenty))?.actions.count ?? 0 })
row("JSON decode only: 20 talks", 20, measure(20_000) {
    if case .array(let a)? = try? JSONParser.parse(talks20) { return a.count }
    return 0
})
row("engine only: load + mediaFinished through 20 talks", 20, measure(20_000) {
    var engine = NCCOEngine()
    var steps = engine.load(parsed, now: now).count
    while !engine.isFinished { steps += engine.mediaFinished(now: now).count }
    return steps
})
