import Media

/// One m-line of a member's subscription and whose microphone it carries.
public struct Track: Sendable, Hashable {
    /// The m-line's `a=mid`.
    public var mid: String
    public var memberID: String
    public var userID: String
    /// The publishing user's name.
    public var name: String
    public var producerID: ProducerID

    public init(mid: String, memberID: String, userID: String, name: String, producerID: ProducerID) {
        self.mid = mid
        self.memberID = memberID
        self.userID = userID
        self.name = name
        self.producerID = producerID
    }
}
