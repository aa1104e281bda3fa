import Glibc

/// A media worker thread's nice value: what it asked for (`MediaConfiguration.threadNice`) and what it runs at.
public struct ThreadPriority: Sendable, Hashable {
    /// nil when the worker was told to leave its thread as the process started it.
    public var requested: Int32?
    public var nice: Int32
    /// errno of the request (EPERM: lowering the value needs root or CAP_SYS_NICE), 0 when it was granted.
    public var error: Int32

    public var granted: Bool { requested == nil || (error == 0 && nice == requested) }

    /// Why the request was refused, for the operator.
    public var refusal: String? {
        guard !granted else { return nil }
        return error == EPERM || error == EACCES
            ? "not permitted: run as root or give the process CAP_SYS_NICE (setcap cap_sys_nice+ep)"
            : String(cString: strerror(error))
    }
}
