/// A trunk's reachability (OPTIONS health checks) and registration, as the core last saw them.
public struct TrunkStatus: Hashable, Sendable {
    public enum Registration: Hashable, Sendable {
        case notRequired
        case pending
        case registered(expiresIn: Int)
        case failed(status: Int)
    }

    public var name: String
    /// nil until the first health check (or registration) answers or times out.
    public var up: Bool?
    public var registration: Registration

    public init(name: String, up: Bool? = nil, registration: Registration = .notRequired) {
        self.name = name
        self.up = up
        self.registration = registration
    }
}
