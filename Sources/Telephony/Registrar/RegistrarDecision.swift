/// What the registrar decided about a REGISTER: the status and the headers the response carries.
public struct RegistrarDecision: Hashable, Sendable {
    public var status: Int
    public var reason: String?
    public var headers: [(name: String, value: String)]

    public init(status: Int, reason: String? = nil, headers: [(name: String, value: String)] = []) {
        self.status = status
        self.reason = reason
        self.headers = headers
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.status == b.status && a.reason == b.reason && a.headers.map(\.name) == b.headers.map(\.name)
            && a.headers.map(\.value) == b.headers.map(\.value)
    }

    public func hash(into h: inout Hasher) {
        h.combine(status)
        for header in headers { h.combine(header.name); h.combine(header.value) }
    }
}
