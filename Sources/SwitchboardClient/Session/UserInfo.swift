/// The user a session is logged in as.
public struct UserInfo: Sendable, Hashable {
    public var id: String
    public var name: String
    public var displayName: String?

    public init(id: String, name: String, displayName: String? = nil) {
        self.id = id
        self.name = name
        self.displayName = displayName
    }
}
