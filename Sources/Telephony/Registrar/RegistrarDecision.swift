/// What the registrar decided about a REGISTER: the status and the headers the response carries.
public struct RegistrarDecision: Hashable, Sendable {
    public var status: Int
    public var reason: String?
    public var headers: [(name: String, value: String)]
    /// The address of record whose bindings an accepted REGISTER set (to be kept across restarts).
    public var aor: String?

    public init(status: Int, reason: String? = nil, headers: [(name: String, value: String)] = [], aor: String? = nil) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.aor = aor
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.status == b.status && a.reason == b.reason && a.aor == b.aor && a.headers.map(\.name) == b.headers.map(\.name)
            && a.headers.map(\.value) == b.headers.map(\.value)
    }

    public func hash(into h: inout Hasher) {
        h.combine(status)
        for header in headers { h.combine(header.name); h.combine(header.value) }
    }
}
