/// Settings of the media plane.
public struct MediaConfiguration: Sendable {
    /// Address the worker sockets bind to (`0.0.0.0`, `::` for dual stack, or a literal).
    public var bindHost = "0.0.0.0"
    /// First UDP port; worker i binds `port + i`. 0 lets the kernel pick (tests).
    public var port: UInt16 = 10_000
    /// The IP put in candidates (NAT or container address); defaults to the bind host,
    /// or 127.0.0.1 when binding to a wildcard.
    public var announcedAddress: String?
    public var workers = 1
    /// Nice value the worker threads ask for (-20…19; lower runs first), nil to leave them at the process's.
    /// A worker waits only for the CPU, and a mixer tick that waits behind other work (a build, a load
    /// generator, the control plane's threads) reaches every listener late. Lowering it needs root or
    /// CAP_SYS_NICE; without them the workers keep the process's value and `MediaEngine.threadPriorities()`
    /// says why.
    public var threadNice: Int32? = -10
    /// Drops this fraction of forwarded video packets (first transmissions only) so loss
    /// recovery can be tested: `SWITCHBOARD_MEDIA_TEST_DROP=0.1`, read only in development mode (`--dev`).
    public var testDropRate: Double = 0

    public init() {}

    /// The address written into `a=candidate` lines.
    public var candidateAddress: String {
        if let announcedAddress, !announcedAddress.isEmpty { return announcedAddress }
        return bindHost == "0.0.0.0" || bindHost == "::" ? "127.0.0.1" : bindHost
    }

    /// Reads the test hooks from the environment.
    public mutating func applyTestEnvironment(_ environment: [String: String]) {
        if let drop = environment["SWITCHBOARD_MEDIA_TEST_DROP"], let rate = Double(drop), rate >= 0, rate < 1 {
            testDropRate = rate
        }
    }
}
