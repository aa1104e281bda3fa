/// The ids of everything one close took down: the object named and what could not outlive it
/// (mediasoup's `routerclose`, `transportclose` and `producerclose`). A router takes its
/// transports; a transport takes its producers and consumers; a producer takes its consumers
/// on every transport of the router.
///
/// The worker that closed them returns this, and the engine forgets every id in it at once,
/// so no map keeps the id of a closed object.
public struct ClosedObjects: Sendable, Hashable {
    public var routers: [RouterID] = []
    public var transports: [TransportID] = []
    public var producers: [ProducerID] = []
    public var consumers: [ConsumerID] = []

    public init(routers: [RouterID] = [], transports: [TransportID] = [], producers: [ProducerID] = [], consumers: [ConsumerID] = []) {
        self.routers = routers
        self.transports = transports
        self.producers = producers
        self.consumers = consumers
    }

    public var isEmpty: Bool { routers.isEmpty && transports.isEmpty && producers.isEmpty && consumers.isEmpty }

    mutating func append(_ other: ClosedObjects) {
        routers += other.routers
        transports += other.transports
        producers += other.producers
        consumers += other.consumers
    }
}
