/// Renegotiation of one subscribe connection as producers come and go (RFC 8829 §5.2.2,
/// §5.3.2: m-lines are never removed or reordered, so a gone consumer leaves its m-line
/// `inactive` and a later consumer of the same kind reuses it).
extension MediaEngine {
    /// A subscribe transport with nothing to send yet; its first offer comes from
    /// `updateSubscription` once there is a producer to consume.
    public func openSubscription(router: RouterID) async throws(MediaError) -> Subscription {
        let info = try await createWebRtcTransport(router: router)
        return Subscription(
            transport: info.id, offer: "", consumers: [], info: info,
            sessionID: UInt64.random(in: 1...UInt64(Int64.max)), version: 1)
    }

    /// Makes the transport consume exactly `wanted`: consumers of other producers close and
    /// their m-lines go `inactive`; new producers get a consumer on a free m-line of their
    /// kind or a new one at the end. The offer (and version) change only when something did.
    /// Producers that vanished meanwhile are skipped. With `reuseInactive` false every new consumer
    /// gets a new m-line (a room switching between forwarding and mixing: a client that keys its
    /// receivers by the SSRCs of an m-line's first use, as aiortc does, then hears the new streams too).
    public func updateSubscription(_ subscription: Subscription, producers wanted: [ProducerID],
                                   reuseInactive: Bool = true) async throws(MediaError) -> Subscription {
        guard let info = subscription.info else { throw .invalid("subscription \(subscription.transport) cannot be renegotiated") }
        var s = subscription
        var changed = false
        let wantedSet = Set(wanted)
        var active: Set<ProducerID> = []
        for (index, consumer) in s.consumers.enumerated() where !s.inactive.contains(index) {
            if wantedSet.contains(consumer.producerID) {
                active.insert(consumer.producerID)
            } else {
                _ = try? await closeConsumer(consumer.id)
                s.inactive.insert(index)
                changed = true
            }
        }
        for producer in wanted where !active.contains(producer) {
            guard let consumer = try? await consume(transport: s.transport, producer: producer) else { continue }
            active.insert(producer)
            changed = true
            if reuseInactive, let free = s.inactive.filter({ s.consumers[$0].kind == consumer.kind }).min() {
                s.consumers[free] = consumer
                s.inactive.remove(free)
            } else {
                s.consumers.append(consumer)
            }
        }
        guard changed else { return s }
        s.version += 1
        s.offer = SDPNegotiator.subscribeOffer(
            transport: info, consumers: s.consumers, inactive: s.inactive, sessionID: s.sessionID, version: s.version)
        return s
    }

    /// Applies the subscriber's answer to the latest offer: the first one connects DTLS;
    /// rejected m-lines close their consumers.
    public func answerSubscription(_ subscription: Subscription, answer: String) async throws(MediaError) -> Subscription {
        var s = subscription
        let parsed = try SDPNegotiator.parseSubscribeAnswer(answer)
        for index in parsed.rejectedIndexes where index < s.consumers.count && !s.inactive.contains(index) {
            _ = try? await closeConsumer(s.consumers[index].id)
            s.inactive.insert(index)
        }
        await applyRetransmission(parsed, consumers: s.consumers, inactive: s.inactive)
        if !s.answered {
            try await connect(transport: s.transport, dtls: parsed.dtls, remoteUsernameFragment: parsed.remoteUsernameFragment)
            s.answered = true
        }
        return s
    }

    /// Turns RTX on or off for each live video consumer as the answer says.
    func applyRetransmission(_ answer: SDPNegotiator.SubscribeAnswer, consumers: [ConsumerParameters], inactive: Set<Int>) async {
        let accepted = Set(answer.retransmissionIndexes)
        for (index, consumer) in consumers.enumerated()
        where consumer.rtxSSRC != nil && !inactive.contains(index) && !answer.rejectedIndexes.contains(index) {
            try? await setRetransmissionStream(consumer: consumer.id, enabled: accepted.contains(index))
        }
    }

    /// Consumers of `subscription` currently carrying a producer, by producer.
    public func activeConsumers(_ subscription: Subscription) -> [ProducerID: ConsumerID] {
        var out: [ProducerID: ConsumerID] = [:]
        for (index, consumer) in subscription.consumers.enumerated() where !subscription.inactive.contains(index) {
            out[consumer.producerID] = consumer.id
        }
        return out
    }
}
