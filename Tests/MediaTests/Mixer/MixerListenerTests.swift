import Audio
import Crypto
import SRTP
import Testing
import Wire
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

extension MixerTests {
    /// An RTCP receiver report about listener `n`'s stream, protected by `sender` (its listener's SRTCP context,
    /// one per listener for the replay check), into its transport.
    func report(_ n: UInt16, fractionLost: UInt8, senders: inout [UInt16: SRTPTransform]) throws {
        let transport = try #require(core.transports[TransportID(rawValue: "tp-\(n)")])
        let consumer = try #require(core.consumers[ConsumerID(rawValue: "cn-\(n)")])
        if senders[n] == nil {
            senders[n] = try SRTPTransform(profile: .aes128CMSHA1_80, masterKey: keys.remoteKey, masterSalt: keys.remoteSalt,
                                           direction: .outbound)
        }
        let sender = try #require(senders[n])
        let report = ReceiverReport(ssrc: 0x0ABC, reports: [ReportBlock(ssrc: consumer.ssrc, fractionLost: fractionLost)])
        let plain = try RTCPPacket.receiverReport(report).serialize()
        var packet = plain + [UInt8](repeating: 0, count: 64)  // room for the SRTCP index and tag
        var length = plain.count
        try packet.withUnsafeMutableBytes { raw in
            try #require(sender.protectRTCP(raw.baseAddress!, length: &length, capacity: raw.count))
            transport.handleRTCP(raw.baseAddress!, length: length, now: 1, queue: core.queue)
        }
        #expect(consumer.reportedFractionLost == fractionLost)
    }

    @Test("the mix's encoders plan FEC for the loss their listeners report: the shared mix for a tenth of its room, not one listener")
    func encodersPlanForReportedLoss() throws {
        try speaker("a", 440, frames: 1)
        try speaker("b", 880, frames: 1)
        for n: UInt16 in 1...10 { try plainListener(n) }
        try listener(11, as: "a")
        let mixer = try core.mixer(mixerID)
        let a = try #require(mixer.participant(MixerParticipantID("a")))
        var senders: [UInt16: SRTPTransform] = [:]
        var second: UInt64 = 1
        /// Seconds of both tones through the mixer (a plan is made once a second).
        func talk(seconds: Int = 1) throws {
            for _ in 0..<seconds {
                for (id, frequency) in [("a", 440.0), ("b", 880.0)] {
                    _ = try core.queueFrames(mixerID, participant: MixerParticipantID(id), samples: tone(frequency, frames: 50), end: false)
                }
                _ = try run(50, from: second * 1_000_000_000)
                second += 1
            }
        }
        try talk()
        #expect(try core.mixerStats(mixerID).sharedExpectedLossPercent == 0, "no report, no loss planned for")
        #expect(a.encoder?.expectedLossPercent == 0)

        // One listener of ten loses a quarter of its packets: its concealment covers it, the room's mix stays as it was.
        try report(1, fractionLost: 64, senders: &senders)
        try talk(seconds: 5)
        #expect(try core.mixerStats(mixerID).sharedExpectedLossPercent == 0)

        // Two of ten: the listener at the 90th percentile loses a quarter, and the mix plans for 20 %.
        try report(2, fractionLost: 64, senders: &senders)
        try talk(seconds: 5)
        #expect(try core.mixerStats(mixerID).sharedExpectedLossPercent == 20)
        #expect(a.encoder?.expectedLossPercent == 0, "a's own mix: its listener reports no loss")

        // a's own mix (b's tone) follows its one listener: 12 % lost plans for 10 %.
        try report(11, fractionLost: 31, senders: &senders)
        try talk(seconds: 5)
        #expect(a.encoder?.expectedLossPercent == 10)

        // The reports clear up: both plans come back down to no loss.
        for n: UInt16 in [1, 2, 11] { try report(n, fractionLost: 0, senders: &senders) }
        try talk(seconds: 30)
        #expect(try core.mixerStats(mixerID).sharedExpectedLossPercent == 0)
        #expect(a.encoder?.expectedLossPercent == 0)
    }
}
