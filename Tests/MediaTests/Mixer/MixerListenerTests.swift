import Audio
import Testing
@testable import Media

/// Plain listeners (the shared mix, no encoder of their own) next to speakers and restricted
/// listeners, through the same in-process worker core as the other mixer tick tests.
extension MixerTests {
    func plainListener(_ n: UInt16) throws {
        try core.addMixerParticipant(mixerID, participant: MixerParticipantID("p\(n)"), source: .none,
                                     options: MixerParticipantOptions(), queueFrames: 1)
        try listener(n, as: "p\(n)")
    }

    func sent(_ n: UInt16) -> UInt64 { core.consumers[ConsumerID(rawValue: "cn-\(n)")]?.stats().packets ?? 0 }

    @Test("plain listeners hold no encoder and each gets one packet per tick; canHear and canSpeak still give own mixes")
    func plainListenersAndRestrictions() throws {
        try speaker("a", 440, frames: 40)
        try speaker("b", 880, frames: 40)
        for n: UInt16 in 1...4 { try plainListener(n) }
        try listener(5)              // bound to nobody: the shared mix too
        try listener(6, as: "a")     // a's mix-minus
        let mixer = try core.mixer(mixerID)
        _ = try run(5)
        var stats = try core.mixerStats(mixerID)
        #expect(stats.encoders == 2, "only the speakers hold an encoder")
        #expect(stats.sharedEncodes == 5 && stats.ownEncodes == 5, "b has no consumer of its own: its mix-minus is not encoded")
        #expect(stats.packetsSent == 30 && (1...6).allSatisfy { sent($0) == 5 }, "one packet per consumer per tick")

        // A listener that may hear only a: an encoder of its own, made on the control path.
        try core.setMixerOptions(mixerID, participant: MixerParticipantID("p1"), options: MixerParticipantOptions(canHear: [MixerParticipantID("a")]))
        #expect(try core.mixerStats(mixerID).encoders == 3)
        _ = try run(5, from: 2_000_000_000)
        let p1 = try #require(mixer.participant(MixerParticipantID("p1")))
        #expect(mixer.core.output(for: p1.slot) == .own)
        let heard = mixer.core.ownMix(for: p1.slot)
        #expect(share(of: 440, in: heard) > 0.8 && share(of: 880, in: heard) < 0.01, "p1 hears a only")
        #expect((1...6).allSatisfy { sent($0) == 10 })

        // b heard by p2 only: every other listener now gets a mix without b (the shared one no longer fits them).
        try core.setMixerOptions(mixerID, participant: MixerParticipantID("b"), options: MixerParticipantOptions(canSpeak: [MixerParticipantID("p2")]))
        _ = try run(5, from: 3_000_000_000)
        stats = try core.mixerStats(mixerID)
        #expect(stats.encoders == 6 && stats.encodersMadeOnTick == 0, "made when canSpeak was set, not on the tick")
        let p2 = try #require(mixer.participant(MixerParticipantID("p2")))
        let p3 = try #require(mixer.participant(MixerParticipantID("p3")))
        #expect(mixer.core.output(for: p2.slot) == .shared, "p2 hears everyone selected")
        #expect(mixer.core.output(for: p3.slot) == .own)
        let p3Heard = mixer.core.ownMix(for: p3.slot)
        #expect(share(of: 440, in: p3Heard) > 0.8 && share(of: 880, in: p3Heard) < 0.01, "p3 does not hear b")
        #expect((1...6).allSatisfy { sent($0) == 15 })

        // A listener leaves (its consumer closes): the lists follow, nobody else misses a tick.
        _ = core.closeConsumer(ConsumerID(rawValue: "cn-4"))
        try core.removeMixerParticipant(mixerID, participant: MixerParticipantID("p4"))
        _ = try run(2, from: 4_000_000_000)
        #expect([1, 2, 3, 5, 6].allSatisfy { sent($0) == 17 })
    }
}
