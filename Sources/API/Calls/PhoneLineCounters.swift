import Synchronization

/// Process-wide counters of phone lines' RTP, for `/metrics`: what a load test reads to tell loss
/// apart from load. Relaxed atomics, one add per packet, no lock on the media loops.
enum PhoneLineCounters {
    /// Phone lines in a mix now.
    static let lines = Atomic<Int>(0)
    /// Voice frames heard from phones (one per RTP packet decoded).
    static let received = Atomic<Int>(0)
    /// Voice frames sent to phones (one per mixer tick per line, silence included).
    static let sent = Atomic<Int>(0)
    /// Voice frames a line could not send (the socket refused them: a full send buffer).
    static let sendFailed = Atomic<Int>(0)
    /// RTP packets that reached phone legs, duplicates and late ones included, added when a leg closes
    /// (beside `received`, which counts only the frames decoded: the difference is duplicates and reordering).
    static let arrived = Atomic<Int>(0)
    /// Packets missing from phones' sequence numbers, added when a leg closes.
    static let lost = Atomic<Int>(0)
    /// Packets from phones that were not usable RTP (malformed, unknown payload), added when a leg closes.
    static let malformed = Atomic<Int>(0)
    /// Phone legs whose media was SRTP, added when a leg closes.
    static let srtpLegs = Atomic<Int>(0)
    /// SRTP/SRTCP packets from phones that failed authentication or the replay check, added when a leg closes.
    static let srtpFailures = Atomic<Int>(0)
    static let dtlsSRTPLegs = Atomic<Int>(0)
    static let dtlsFailures = Atomic<Int>(0)
    /// Frames heard from phones dropped because the line's queue was full (the phone sends faster than the tick).
    static let framesDropped = Atomic<Int>(0)
    /// Frames heard from phones dropped to bring a line's grown delay back down (`LineQueue`).
    static let framesTrimmed = Atomic<Int>(0)
    /// Frames from phones discarded before their line was first mixed (said while the call was being
    /// connected to its conversation; `LineQueue`): not heard by anyone, and not loss.
    static let framesUnmixed = Atomic<Int>(0)
    /// Frames from phones that came after a line's queue had run dry (late: a gap heard; `LineQueue`).
    static let underruns = Atomic<Int>(0)

    /// Frames phone lines resampled to or from their mixer's rate (none while only G.711 phones share a
    /// conversation: its mixer runs at 8 kHz).
    static let resampled = Atomic<Int>(0)
    /// Answered calls hung up because their far end sent nothing for `--rtp-timeout`.
    static let rtpTimeouts = Atomic<Int>(0)

    /// One tick's frame to a phone: sent, or refused by the socket.
    static func count(sent ok: Bool) {
        if ok { sent.add(1, ordering: .relaxed) } else { sendFailed.add(1, ordering: .relaxed) }
    }

    static func render() -> String {
        var out = "# HELP switchboard_phone_lines Phone legs' RTP in a conversation's mix.\n# TYPE switchboard_phone_lines gauge\n"
        out += "switchboard_phone_lines \(lines.load(ordering: .relaxed))\n"
        out += "# HELP switchboard_phone_rtp_timeouts_total Answered calls hung up because the far end sent no RTP or RTCP for --rtp-timeout.\n"
        out += "# TYPE switchboard_phone_rtp_timeouts_total counter\nswitchboard_phone_rtp_timeouts_total \(rtpTimeouts.load(ordering: .relaxed))\n"
        out += "# HELP switchboard_phone_rtp_packets_total Voice packets phone lines received from and sent to phones.\n"
        out += "# TYPE switchboard_phone_rtp_packets_total counter\n"
        out += "switchboard_phone_rtp_packets_total{direction=\"received\"} \(received.load(ordering: .relaxed))\n"
        out += "switchboard_phone_rtp_packets_total{direction=\"sent\"} \(sent.load(ordering: .relaxed))\n"
        out += "# HELP switchboard_phone_rtp_send_failed_total Voice frames to phones the socket refused.\n"
        out += "# TYPE switchboard_phone_rtp_send_failed_total counter\nswitchboard_phone_rtp_send_failed_total \(sendFailed.load(ordering: .relaxed))\n"
        out += "# HELP switchboard_phone_rtp_arrived_total RTP packets that reached phone legs, duplicates and late ones included (counted when a leg closes).\n"
        out += "# TYPE switchboard_phone_rtp_arrived_total counter\nswitchboard_phone_rtp_arrived_total \(arrived.load(ordering: .relaxed))\n"
        out += "# HELP switchboard_phone_rtp_lost_total Packets missing from phones' RTP sequence numbers (counted when a leg closes).\n"
        out += "# TYPE switchboard_phone_rtp_lost_total counter\nswitchboard_phone_rtp_lost_total \(lost.load(ordering: .relaxed))\n"
        out += "# HELP switchboard_phone_rtp_dropped_total Packets from phones dropped as unusable (counted when a leg closes).\n"
        out += "# TYPE switchboard_phone_rtp_dropped_total counter\nswitchboard_phone_rtp_dropped_total \(malformed.load(ordering: .relaxed))\n"
        out += "# HELP switchboard_phone_srtp_legs_total Phone legs whose media was SRTP (SDES keys; counted when a leg closes).\n"
        out += "# TYPE switchboard_phone_srtp_legs_total counter\nswitchboard_phone_srtp_legs_total \(srtpLegs.load(ordering: .relaxed))\n"
        out += "# HELP switchboard_phone_dtls_srtp_legs_total Phone legs whose media was keyed by DTLS (counted when a leg closes).\n"
        out += "# TYPE switchboard_phone_dtls_srtp_legs_total counter\nswitchboard_phone_dtls_srtp_legs_total \(dtlsSRTPLegs.load(ordering: .relaxed))\n"
        out += "# HELP switchboard_phone_dtls_failures_total DTLS-SRTP handshakes on phone legs that failed (a certificate not matching its fingerprint, no answer; counted when a leg closes).\n"
        out += "# TYPE switchboard_phone_dtls_failures_total counter\nswitchboard_phone_dtls_failures_total \(dtlsFailures.load(ordering: .relaxed))\n"
        out += "# HELP switchboard_phone_srtp_failures_total SRTP or SRTCP packets from phones dropped: failed authentication or replayed (counted when a leg closes).\n"
        out += "# TYPE switchboard_phone_srtp_failures_total counter\nswitchboard_phone_srtp_failures_total \(srtpFailures.load(ordering: .relaxed))\n"
        out += "# HELP switchboard_phone_frames_dropped_total Frames from phones dropped because a line's queue was full.\n"
        out += "# TYPE switchboard_phone_frames_dropped_total counter\nswitchboard_phone_frames_dropped_total \(framesDropped.load(ordering: .relaxed))\n"
        out += "# HELP switchboard_phone_frames_trimmed_total Frames from phones dropped to bring a line's grown delay back down.\n"
        out += "# TYPE switchboard_phone_frames_trimmed_total counter\nswitchboard_phone_frames_trimmed_total \(framesTrimmed.load(ordering: .relaxed))\n"
        out += "# HELP switchboard_phone_frames_unmixed_total Frames from phones discarded before their line was first mixed (said while the call was being connected).\n"
        out += "# TYPE switchboard_phone_frames_unmixed_total counter\nswitchboard_phone_frames_unmixed_total \(framesUnmixed.load(ordering: .relaxed))\n"
        out += "# HELP switchboard_phone_underruns_total Frames from phones that came late, after a line's queue had run dry.\n"
        out += "# TYPE switchboard_phone_underruns_total counter\nswitchboard_phone_underruns_total \(underruns.load(ordering: .relaxed))\n"
        out += "# HELP switchboard_phone_frames_resampled_total Frames phone lines resampled to or from their mixer's rate (none while only G.711 phones share a conversation).\n"
        out += "# TYPE switchboard_phone_frames_resampled_total counter\nswitchboard_phone_frames_resampled_total \(resampled.load(ordering: .relaxed))\n"
        return out
    }
}
