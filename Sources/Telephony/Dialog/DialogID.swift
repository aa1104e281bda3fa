/// A dialog's identity: Call-ID, local tag and remote tag (RFC 3261 §12).
public struct DialogID: Hashable, Sendable, CustomStringConvertible {
    public var callID: String
    public var localTag: String
    public var remoteTag: String

    public init(callID: String, localTag: String, remoteTag: String) {
        self.callID = callID
        self.localTag = localTag
        self.remoteTag = remoteTag
    }

    public var description: String { "\(callID);local=\(localTag);remote=\(remoteTag)" }
}
