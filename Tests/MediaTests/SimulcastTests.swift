import Testing
@testable import Media

/// Which simulcast layer a subscriber gets, and when a subscriber held below the one it wants tries a larger one.
@Suite("Simulcast layer choice")
struct SimulcastTests {
    @Test("a layer is live while it sends; the largest live one by default, else the smallest at least the preferred size")
    func simulcastSelection() {
        typealias L = SimulcastSelection.Layer
        let sized = [L(width: 240, height: 135, live: true), L(width: 480, height: 270, live: true), L(width: 960, height: 540, live: true)]
        #expect(SimulcastSelection.choose(sized, preferredWidth: 0, preferredHeight: 0) == 2)
        #expect(SimulcastSelection.choose(sized, preferredWidth: 1, preferredHeight: 1) == 0)
        #expect(SimulcastSelection.choose(sized, preferredWidth: 320, preferredHeight: 180) == 1)
        #expect(SimulcastSelection.choose(sized, preferredWidth: 480, preferredHeight: 270) == 1)
        #expect(SimulcastSelection.choose(sized, preferredWidth: 481, preferredHeight: 1) == 2)
        #expect(SimulcastSelection.choose(sized, preferredWidth: 4000, preferredHeight: 2000) == 2)
        // The largest stopped: the next one down, whatever was preferred above it.
        var stopped = sized
        stopped[2].live = false
        #expect(SimulcastSelection.choose(stopped, preferredWidth: 0, preferredHeight: 0) == 1)
        #expect(SimulcastSelection.choose(stopped, preferredWidth: 640, preferredHeight: 360) == 1)
        // Listed largest first: ranked by size, not by order.
        #expect(SimulcastSelection.choose(Array(sized.reversed()), preferredWidth: 0, preferredHeight: 0) == 0)
        #expect(SimulcastSelection.choose(Array(sized.reversed()), preferredWidth: 1, preferredHeight: 1) == 2)
        // Sizes not known yet (no key frame, or H.264): the offer's order, lowest first.
        let unsized = [L(width: 0, height: 0, live: true), L(width: 0, height: 0, live: true), L(width: 0, height: 0, live: false)]
        #expect(SimulcastSelection.choose(unsized, preferredWidth: 1, preferredHeight: 1) == 1)
        #expect(SimulcastSelection.choose(unsized.map { L(width: $0.width, height: $0.height, live: false) },
                                          preferredWidth: 0, preferredHeight: 0) == nil)
        // A budget (the subscriber's link): the largest that fits up to the wanted one; the current one with a quarter to spare.
        var priced = sized
        (priced[0].bitrate, priced[1].bitrate, priced[2].bitrate) = (150_000, 300_000, 600_000)
        #expect(SimulcastSelection.choose(priced, preferredWidth: 0, preferredHeight: 0, budget: 1_000_000) == 2)
        #expect(SimulcastSelection.choose(priced, preferredWidth: 0, preferredHeight: 0, budget: 400_000) == 1)
        #expect(SimulcastSelection.choose(priced, preferredWidth: 1, preferredHeight: 1, budget: 1_000_000) == 0)
        #expect(SimulcastSelection.choose(priced, preferredWidth: 0, preferredHeight: 0, budget: 100_000) == 0)
        #expect(SimulcastSelection.choose(priced, preferredWidth: 0, preferredHeight: 0, budget: 280_000) == 0)
        #expect(SimulcastSelection.choose(priced, preferredWidth: 0, preferredHeight: 0, budget: 280_000, current: 1) == 1)
        #expect(SimulcastSelection.choose(priced, preferredWidth: 0, preferredHeight: 0, budget: 240_000, current: 1) == 1)
        #expect(SimulcastSelection.choose(priced, preferredWidth: 0, preferredHeight: 0, budget: 230_000, current: 1) == 0)
    }

    @Test("a publisher is asked to pause the layers no subscriber prefers, three seconds after the last did, and to resume one at once")
    func unusedLayers() {
        typealias L = SimulcastSelection.Layer
        // Listed largest first, one of them stopped by the publisher: sizes rank them, and a stopped layer may still be needed.
        let layers = [L(width: 960, height: 540, live: true), L(width: 480, height: 270, live: false), L(width: 240, height: 135, live: true)]
        func needed(_ preferences: [(width: Int, height: Int)], everything: Bool = false) -> [Bool] {
            SimulcastSelection.needed(layers, preferences: preferences, everything: everything)
        }
        #expect(needed([]) == [false, false, true], "no subscriber: the smallest alone")
        #expect(needed([], everything: true) == [true, true, true], "a recorder, or a subscriber asking for the largest")
        #expect(needed([(1, 1)]) == [false, false, true])
        #expect(needed([(1, 1), (320, 180)]) == [false, true, true], "up to the largest any preference asks for")
        #expect(needed([(1, 1), (481, 1)]) == [true, true, true])
        #expect(needed([(5000, 5000)]) == [true, true, true], "more than the largest: the largest")
        var unsized = layers
        unsized[1].width = 0
        #expect(SimulcastSelection.needed(unsized, preferences: [(1, 1)], everything: false) == [true, true, true], "a size not known yet: all")

        let second: UInt64 = 1_000_000_000
        var unused = UnusedLayers(count: 3)
        let dues = [10 * second, 10 * second + 1, 10 * second + UnusedLayers.interval].map { unused.due(now: $0) }
        #expect(dues == [true, false, true])
        // (now in seconds, what is needed) → whether the paused layers changed, and which they are.
        let steps: [(Double, [Bool])] = [
            (10, [false, true, true]), (12, [false, true, true]),  // not yet three seconds
            (13, [false, false, true]),
            (15, [false, true, true]), (16.5, [false, false, true]),  // the middle one needed again before its three seconds
            (19.5, [false, false, true]),
            (20, [true, true, true]),  // resumed at once
            (21, [true, true]),  // a list of another length is ignored
        ]
        var seen: [(Bool, [Bool])] = []
        for (time, needed) in steps {
            let changed = unused.update(needed: needed, now: UInt64(time * Double(second)))
            seen.append((changed, unused.paused))
        }
        let none = [false, false, false]
        let expected: [(Bool, [Bool])] = [(false, none), (false, none), (true, [true, false, false]), (false, [true, false, false]),
                                          (false, [true, false, false]), (true, [true, true, false]), (true, none), (false, none)]
        #expect(seen.map(\.0) == expected.map(\.0) && seen.map(\.1) == expected.map(\.1), "\(seen)")
    }

    @Test("a preferred frame rate takes the fewest temporal layers that make it (within a tenth), else all")
    func temporalLayers() {
        let l1t3 = [7.4, 7.5, 15.0, 0]  // VP8 L1T3 at 30 fps: a quarter of the frames in the base, a quarter more, a half more
        #expect(SimulcastSelection.temporalLayer(frameRates: l1t3, preferred: 0) == .max, "no preference: all")
        #expect(SimulcastSelection.temporalLayer(frameRates: l1t3, preferred: 7.5) == 0)
        #expect(SimulcastSelection.temporalLayer(frameRates: l1t3, preferred: 1) == 0)
        #expect(SimulcastSelection.temporalLayer(frameRates: l1t3, preferred: 10) == 1)
        #expect(SimulcastSelection.temporalLayer(frameRates: l1t3, preferred: 15) == 1)
        #expect(SimulcastSelection.temporalLayer(frameRates: l1t3, preferred: 24) == 2)
        #expect(SimulcastSelection.temporalLayer(frameRates: l1t3, preferred: 60) == .max, "more than the publisher sends: all")
        #expect(SimulcastSelection.temporalLayer(frameRates: [0, 0, 0, 0], preferred: 7.5) == .max, "no temporal layers")

        // Switching: down at any frame; up at a key frame, or a layer at a time at a frame of it that needs only the base.
        func next(_ sending: UInt8, _ target: UInt8, layer: UInt8, sync: Bool = false, keyframe: Bool = false) -> UInt8 {
            SimulcastSelection.temporalLayer(sending: sending, target: target, at: TemporalMark(layer: layer, frameStart: true, sync: sync), keyframe: keyframe)
        }
        #expect(next(.max, 0, layer: 2) == 0 && next(2, 1, layer: 0) == 1)
        #expect(next(0, .max, layer: 0) == 0, "a base layer frame: the layers above may still refer to frames left out")
        #expect(next(0, .max, layer: 2) == 0 && next(0, .max, layer: 1) == 0, "not a sync frame")
        #expect(next(0, .max, layer: 1, sync: true) == 1 && next(1, .max, layer: 2, sync: true) == 2)
        #expect(next(0, .max, layer: 2, sync: true) == 2, "a layer's sync frame needs only the base: the layer between may follow later")
        #expect(next(0, 1, layer: 2, sync: true) == 0, "not above the target")
        #expect(next(0, .max, layer: 0, keyframe: true) == .max && next(0, 1, layer: 0, keyframe: true) == 1)
    }

    @Test("a subscriber held below the layer it wants tries the next one up after a hold; a probe the link cannot carry doubles the hold")
    func layerProbe() {
        let s: UInt64 = 1_000_000_000
        var probe = LayerProbe()
        var affordable: Set<Int> = [0]
        func decide(_ estimate: UInt64, at t: UInt64) -> Int {
            probe.decide(fitting: affordable.max()!, wanted: 2, stepUp: affordable.max()! + 1, estimate: estimate,
                         affords: { affordable.contains($0) }, now: t * s / 10)
        }
        // Held to layer 0 from the start: the first probe goes at once, and lasts the window.
        #expect(decide(300_000, at: 0) == 1)
        #expect(decide(310_000, at: 50) == 1)
        // The estimate did not grow to afford layer 1: back down, and the next probe waits the doubled hold.
        #expect(decide(300_000, at: 81) == 0)
        #expect(probe.hold == 2 * LayerProbe.minimumHold)
        #expect(decide(300_000, at: 100) == 0)
        #expect(decide(300_000, at: 182) == 1)
        // An estimate falling by over 15 % during the probe (the link overused) ends it early, doubling the hold again.
        #expect(decide(250_000, at: 185) == 0)
        #expect(probe.hold == 4 * LayerProbe.minimumHold)
        // A probe after which the estimate affords the layer keeps it, and the hold is back to its minimum.
        #expect(decide(300_000, at: 584) == 1)
        affordable = [0, 1]
        #expect(decide(400_000, at: 665) == 1)
        #expect(probe.hold == LayerProbe.minimumHold && probe.layer == nil)
        // From there the next layer up, after the hold.
        #expect(decide(400_000, at: 700) == 1)
        #expect(decide(400_000, at: 716) == 2)
        // A probe during which the estimate falls so far that not even the layer it started from fits (its own
        // queue): back to that layer, not below; whether the link keeps it there is the usual downgrade's to say.
        probe.reset()
        #expect(decide(400_000, at: 800) == 2)
        affordable = [0]
        #expect(decide(200_000, at: 805) == 1 && probe.layer == nil && probe.base == nil)
        affordable = [0, 1]
        // When the subscriber gets what it wants there is nothing to probe.
        probe.reset()
        #expect(probe.decide(fitting: 2, wanted: 2, stepUp: nil, estimate: 2_000_000, affords: { _ in true }, now: 900 * s) == 2)
    }
}
