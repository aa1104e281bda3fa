import CShims

extension WorkerCore {
    func addProducerTap(_ id: ProducerID, tap: ProducerTapID, packets: Int) throws(MediaError) {
        guard let producer = producers[id] else { throw .notFound("producer \(id)") }
        guard !producer.taps.contains(where: { $0.id == tap }) else { throw .invalid("tap \(tap) already on producer \(id)") }
        producer.taps.append(ProducerTap(id: tap, capacity: packets))
        // A recording of video starts at a key frame: ask for one now rather than wait for the next.
        producer.requestKeyframe(now: sb_monotonic_ns())
    }

    func drainProducerTap(_ id: ProducerID, tap tapID: ProducerTapID) throws(MediaError) -> ProducerTapPackets {
        guard let producer = producers[id] else { throw .notFound("producer \(id)") }
        guard let tap = producer.taps.first(where: { $0.id == tapID }) else { throw .notFound("tap \(tapID) on producer \(id)") }
        return tap.drain(codec: producer.codec.name, clockRate: Int(producer.codec.clockRate))
    }

    func removeProducerTap(_ id: ProducerID, tap: ProducerTapID) {
        producers[id]?.taps.removeAll { $0.id == tap }
    }

    func requestKeyframe(producer id: ProducerID) throws(MediaError) {
        guard let producer = producers[id] else { throw .notFound("producer \(id)") }
        producer.requestKeyframe(now: sb_monotonic_ns())
    }
}
