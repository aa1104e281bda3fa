/// How many media objects of each kind exist: a snapshot for tests and metrics.
public struct MediaObjectCounts: Sendable, Hashable, Codable {
    public var routers: Int
    public var transports: Int
    public var producers: Int
    public var consumers: Int

    public init(routers: Int = 0, transports: Int = 0, producers: Int = 0, consumers: Int = 0) {
        self.routers = routers
        self.transports = transports
        self.producers = producers
        self.consumers = consumers
    }

    static func + (a: MediaObjectCounts, b: MediaObjectCounts) -> MediaObjectCounts {
        MediaObjectCounts(
            routers: a.routers + b.routers, transports: a.transports + b.transports,
            producers: a.producers + b.producers, consumers: a.consumers + b.consumers)
    }
}
