extension MediaEngine {
    /// Starts copying what a producer receives into a ring of `packets` payloads for a recorder, and asks a
    /// video publisher for a key frame. Drain it with `drainProducerTap` often enough (the ring drops, never grows);
    /// draining a closed producer's tap throws `notFound`, which is how a recorder learns its stream ended.
    public func addProducerTap(_ producer: ProducerID, _ tap: ProducerTapID, packets: Int = 1_024) async throws(MediaError) {
        guard (16...8_192).contains(packets) else { throw .invalid("tap packets 16...8192") }
        try await worker(producer: producer).run { core throws(MediaError) in try core.addProducerTap(producer, tap: tap, packets: packets) }
    }

    /// What a producer tap captured since the last drain, in arrival order.
    public func drainProducerTap(_ producer: ProducerID, _ tap: ProducerTapID) async throws(MediaError) -> ProducerTapPackets {
        try await worker(producer: producer).run { core throws(MediaError) in try core.drainProducerTap(producer, tap: tap) }
    }

    public func removeProducerTap(_ producer: ProducerID, _ tap: ProducerTapID) async {
        guard let worker = try? worker(producer: producer) else { return }
        _ = try? await worker.run { core throws(MediaError) in core.removeProducerTap(producer, tap: tap) }
    }

    /// Asks a video producer's publisher for a key frame (throttled as subscribers' requests are).
    public func requestKeyframe(producer: ProducerID) async throws(MediaError) {
        try await worker(producer: producer).run { core throws(MediaError) in try core.requestKeyframe(producer: producer) }
    }
}
