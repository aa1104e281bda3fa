/// What a session remembers about its own calls, shared by every call event stream of the session:
/// the calls it placed, and those it is hanging up itself (so their end reads as a local hangup).
struct VoiceLedger: Sendable {
    var placed: Set<CallID> = []
    var hangingUp: Set<CallID> = []
    var answered: Set<CallID> = []

    /// Calls remembered at most per set; a session that made more forgets the oldest sets wholesale
    /// (calls that old have long ended).
    static let limit = 4096

    /// Adds `call` to the set `path` names, keeping the set bounded.
    mutating func remember(_ call: CallID, in path: WritableKeyPath<VoiceLedger, Set<CallID>>) {
        if self[keyPath: path].count >= Self.limit { self[keyPath: path].removeAll() }
        self[keyPath: path].insert(call)
    }
}
