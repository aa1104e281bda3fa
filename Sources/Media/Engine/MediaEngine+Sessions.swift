/// Offer/answer flows on top of the engine: what a signaling layer calls with SDP in hand.
extension MediaEngine {
    /// A publishing peer connection set up from the client's offer.
    public struct Publication: Sendable {
        public var transport: TransportID
        public var answer: String
        public var producers: [(id: ProducerID, parameters: ProducerParameters)]
    }

    /// A subscribing peer connection: our offer, waiting for the client's answer.
    public struct Subscription: Sendable {
        public var transport: TransportID
        public var offer: String
        /// One per m-line, in m-line order; an index in `inactive` no longer carries its consumer.
        public var consumers: [ConsumerParameters]
        /// What the offers are built from (ICE and DTLS stay the same across renegotiations).
        public var info: TransportInfo? = nil
        /// m-lines whose consumer is gone: offered `inactive` until a new consumer reuses them.
        public var inactive: Set<Int> = []
        /// `o=` session id and version (RFC 8829 §5.2.2: the version grows with every offer).
        public var sessionID: UInt64 = 0
        public var version: UInt64 = 2
        /// True once an answer has connected the transport.
        public var answered = false
    }

    /// Creates a transport for a client's publish offer, produces every accepted track and
    /// returns the SDP answer.
    public func publish(router: RouterID, offer: String) async throws(MediaError) -> Publication {
        let info = try await createWebRtcTransport(router: router)
        do {
            let plan = try SDPNegotiator.answer(offer: offer, transport: info)
            try await connect(transport: info.id, dtls: plan.dtls, remoteUsernameFragment: plan.remoteUsernameFragment)
            var producers: [(ProducerID, ProducerParameters)] = []
            for parameters in plan.producers {
                producers.append((try await produce(transport: info.id, parameters: parameters), parameters))
            }
            return Publication(transport: info.id, answer: plan.answer, producers: producers.map { ($0.0, $0.1) })
        } catch {
            _ = try? await closeTransport(info.id)
            throw error
        }
    }

    /// Creates a transport consuming `producers` (default: every producer in the room) and
    /// returns our SDP offer; finish with `completeSubscription`.
    public func subscribe(router: RouterID, producers wanted: [ProducerID]? = nil) async throws(MediaError) -> Subscription {
        var list = wanted ?? []
        if wanted == nil { list = try await producers(in: router).map(\.id) }
        guard !list.isEmpty else { throw .notFound("no producers in router \(router)") }
        let info = try await createWebRtcTransport(router: router)
        do {
            var consumers: [ConsumerParameters] = []
            for producer in list { consumers.append(try await consume(transport: info.id, producer: producer)) }
            let sessionID = UInt64.random(in: 1...UInt64(Int64.max))
            return Subscription(
                transport: info.id, offer: SDPNegotiator.subscribeOffer(transport: info, consumers: consumers, sessionID: sessionID, version: 2),
                consumers: consumers, info: info, sessionID: sessionID)
        } catch {
            _ = try? await closeTransport(info.id)
            throw error
        }
    }

    /// Applies the subscriber's answer: DTLS role and fingerprint; rejected m-lines close
    /// their consumers.
    public func completeSubscription(_ subscription: Subscription, answer: String) async throws(MediaError) {
        let parsed = try SDPNegotiator.parseSubscribeAnswer(answer)
        for index in parsed.rejectedIndexes where index < subscription.consumers.count {
            _ = try? await closeConsumer(subscription.consumers[index].id)
        }
        await applyRetransmission(parsed, consumers: subscription.consumers, inactive: [])
        try await connect(transport: subscription.transport, dtls: parsed.dtls, remoteUsernameFragment: parsed.remoteUsernameFragment)
    }
}
