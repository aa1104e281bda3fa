import Audio
import Crypto

/// Mixer commands, run on the worker thread through the mailbox.
extension WorkerCore {
    func createMixer(_ id: MixerID, router routerID: RouterID, outputID: ProducerID, capacity: Int, maxSpeakers: Int) throws(MediaError) {
        guard let router = routers[routerID] else { throw .notFound("router \(routerID)") }
        let random = SystemRandom()
        let mixer = try Mixer(id: id, router: router, worker: self, capacity: capacity, maxSpeakers: maxSpeakers, outputID: outputID,
                              ssrc: random.next(UInt32.self) | 1, initialSequence: random.next(UInt16.self),
                              initialTimestamp: random.next(UInt32.self))
        guard mixers[id] == nil else { throw .invalid("mixer \(id) exists") }
        mixers[id] = mixer
        mixerList.append(mixer)
        producers[outputID] = mixer.output
    }

    func mixer(_ id: MixerID) throws(MediaError) -> Mixer {
        guard let mixer = mixers[id] else { throw .notFound("mixer \(id)") }
        return mixer
    }

    func addMixerParticipant(_ id: MixerID, participant: MixerParticipantID, source: MixerSource,
                             options: MixerParticipantOptions, queueFrames: Int) throws(MediaError) {
        let mixer = try mixer(id)
        // Whatever it is, it takes or gives the mix at 48 kHz: made at that rate (settled again if it fails).
        mixer.widen()
        defer { mixer.settleRate() }
        switch source {
        case .none:
            try mixer.add(participant, input: nil, producer: nil, options: options)
        case .frames:
            try mixer.add(participant, input: FrameQueueMixerInput(rate: mixer.rate, capacity: queueFrames), producer: nil, options: options)
        case .producer(let producerID):
            guard let producer = producers[producerID], producer.router === mixer.router, producer.parameters.kind == .audio,
                  producer !== mixer.output else {
                throw .notFound("audio producer \(producerID) in the mixer's router")
            }
            let input: RTPMixerInput
            do {
                var configuration = OpusCodec.Configuration()
                configuration.sampleRate = mixer.rate
                input = try RTPMixerInput(codec: try OpusCodec(configuration), codecRate: mixer.rate, mixerRate: mixer.rate, clockRate: 48_000)
            } catch { throw .invalid("opus decoder: \(error)") }
            try mixer.add(participant, input: input, producer: producer, options: options)
        }
    }

    /// A participant whose audio comes and goes through a port made here, on this worker's loop.
    func addMixerPort(_ id: MixerID, participant: MixerParticipantID, options: MixerParticipantOptions,
                      make: MixerPortFactory) throws(MediaError) {
        let mixer = try mixer(id)
        let port: any MixerPort
        do { port = try make(loop) } catch { throw .invalid("mixer port: \(error)") }
        do { try mixer.add(participant, input: PortMixerInput(port), producer: nil, options: options) } catch {
            port.close()
            throw error
        }
    }

    func removeMixerParticipant(_ id: MixerID, participant: MixerParticipantID) throws(MediaError) {
        try mixer(id).remove(participant)
    }

    func setMixerOptions(_ id: MixerID, participant: MixerParticipantID, options: MixerParticipantOptions) throws(MediaError) {
        try mixer(id).setOptions(participant, options)
    }

    func bindMixerOutput(_ id: MixerID, consumer consumerID: ConsumerID, participant: MixerParticipantID) throws(MediaError) {
        let mixer = try mixer(id)
        guard let consumer = consumers[consumerID], consumer.producer === mixer.output else {
            throw .notFound("consumer \(consumerID) of mixer \(id)")
        }
        mixer.bind(consumer, to: participant)
    }

    /// Queues frames for a `.frames` participant; returns the room left afterwards (in frames)
    /// and how many of the samples' frames were taken.
    func queueFrames(_ id: MixerID, participant: MixerParticipantID, samples: [Int16], end: Bool) throws(MediaError) -> QueueState {
        let mixer = try mixer(id)
        guard let queue = mixer.participant(participant)?.input as? FrameQueueMixerInput else {
            throw .notFound("frame input \(participant) in mixer \(id)")
        }
        let taken = queue.enqueue(samples)
        if end && taken * mixer.rate.samplesPerFrame >= samples.count { queue.ended = true }
        return QueueState(taken: taken, space: queue.space, queued: queue.queued, finished: queue.finished)
    }

    func addMixerTap(_ id: MixerID, tap: MixerTapID, participant: MixerParticipantID?, split: Bool, speakerChannels: Int = 0,
                     frames: Int) throws(MediaError) {
        try mixer(id).addTap(tap, participant: participant, split: split, speakerChannels: speakerChannels, capacity: frames)
    }

    func drainMixerTap(_ id: MixerID, tap tapID: MixerTapID) throws(MediaError) -> MixerTapSamples {
        guard let tap = try mixer(id).tap(tapID) else { throw .notFound("tap \(tapID) on mixer \(id)") }
        return MixerTapSamples(samples: tap.drain(), channels: tap.channels, dropped: tap.dropped)
    }

    func removeMixerTap(_ id: MixerID, tap: MixerTapID) throws(MediaError) { try mixer(id).removeTap(tap) }

    func mixerStats(_ id: MixerID) throws(MediaError) -> MixerStats { try mixer(id).currentStats() }

    /// Speaking changes and finished players of every mixer, since the last call.
    func mixerEvents() -> [MediaEvent] {
        var out: [MediaEvent] = []
        for mixer in mixerList {
            for (participant, speaking) in mixer.speakingChanges() { out.append(.mixerSpeaking(mixer.id, participant, speaking)) }
            for participant in mixer.finishedParticipants() {
                mixer.remove(participant)
                out.append(.mixerInputFinished(mixer.id, participant))
            }
        }
        return out
    }

    @discardableResult
    func closeMixer(_ id: MixerID) -> ClosedObjects {
        guard let mixer = mixers.removeValue(forKey: id) else { return ClosedObjects() }
        mixerList.removeAll { $0 === mixer }
        for participant in Array(mixer.participants.keys) { mixer.remove(participant) }
        var closed = ClosedObjects()
        for consumer in mixer.output.consumers { closed.append(closeConsumer(consumer.id)) }
        producers.removeValue(forKey: mixer.output.id)
        closed.producers.append(mixer.output.id)
        return closed
    }
}

/// Where a frame queue stands after `queueFrames`.
public struct QueueState: Sendable, Hashable {
    public var taken: Int
    public var space: Int
    public var queued: Int
    public var finished: Bool
}
