import Wire

/// The receive side of transport-wide congestion control
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01) for one publishing transport:
/// each RTP packet's transport-wide sequence number and arrival time are recorded as it
/// arrives, and every transport tick turns them into RTCP transport feedback. The
/// sender's bandwidth estimator (libwebrtc's GoogCC) reads packet delays from it, probes,
/// and ramps its video to what the path carries in seconds; without it a browser raises
/// its rate by about 8% a second from 300 kb/s.
///
/// Recording writes into preallocated storage (no allocation per packet); building the
/// feedback allocates, at tick rate.
struct TransportCCRecorder {
    /// Packets recorded between two feedbacks at most (about 1 s of 20 Mb/s video at 50 ms).
    static let capacity = 4096

    private var unwrapper = SequenceNumberUnwrapper()
    private var sequences: [Int64]
    private var arrivals: [Int64]
    private(set) var count = 0
    /// The first sequence number the next feedback may report; older arrivals were late.
    private var nextToReport: Int64?
    private var feedbackCount: UInt8 = 0
    private(set) var feedbackSent: UInt64 = 0

    init() {
        sequences = [Int64](repeating: 0, count: Self.capacity)
        arrivals = [Int64](repeating: 0, count: Self.capacity)
    }

    /// Notes a packet's transport-wide sequence number at its arrival (`now`, monotonic ns).
    @inline(__always)
    mutating func record(_ sequence: UInt16, now: UInt64) {
        guard count < Self.capacity else { return }
        sequences[count] = unwrapper.unwrap(sequence)
        arrivals[count] = Int64(now / 1000)
        count += 1
    }

    /// Feedback covering everything recorded since the last call, in sequence order (one
    /// packet unless a gap or a delta does not fit one), and starts over.
    mutating func takeFeedback(senderSSRC: UInt32, mediaSSRC: UInt32) -> [TransportFeedback] {
        guard count > 0 else { return [] }
        let order = (0..<count).sorted { sequences[$0] < sequences[$1] }
        var reports: [TransportFeedback] = []
        var builder = TransportFeedbackBuilder(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, feedbackPacketCount: feedbackCount)
        var last: Int64?
        for i in order {
            let sequence = sequences[i]
            if let next = nextToReport, sequence < next { continue }  // arrived after its feedback went
            if sequence == last { continue }  // a duplicate
            let wire = UInt16(truncatingIfNeeded: sequence)
            if !builder.add(sequenceNumber: wire, arrivalMicroseconds: arrivals[i]) {
                if let feedback = builder.build() {
                    reports.append(feedback)
                    feedbackCount &+= 1
                }
                builder = TransportFeedbackBuilder(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, feedbackPacketCount: feedbackCount)
                _ = builder.add(sequenceNumber: wire, arrivalMicroseconds: arrivals[i])
            }
            last = sequence
        }
        if let feedback = builder.build() {
            reports.append(feedback)
            feedbackCount &+= 1
        }
        if let last { nextToReport = last + 1 }
        count = 0
        feedbackSent &+= UInt64(reports.count)
        return reports
    }
}
