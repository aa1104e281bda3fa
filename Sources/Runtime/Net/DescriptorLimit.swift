import Glibc

/// The process's open-file limit (`RLIMIT_NOFILE`).
public enum DescriptorLimit {
    /// Raises the soft limit to the hard limit (a server wants every descriptor it is allowed) and returns
    /// the limits in force afterwards.
    @discardableResult
    public static func raiseToHard() -> (soft: Int, hard: Int) {
        var l = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &l) == 0 else { return (1024, 1024) }
        if l.rlim_cur < l.rlim_max {
            var raised = l
            raised.rlim_cur = l.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { l = raised }
        }
        return (clamp(l.rlim_cur), clamp(l.rlim_max))
    }

    /// The soft limit now.
    public static var current: Int {
        var l = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &l) == 0 else { return 1024 }
        return clamp(l.rlim_cur)
    }

    private static func clamp(_ v: rlim_t) -> Int { v > rlim_t(Int32.max) ? Int(Int32.max) : Int(v) }
}
