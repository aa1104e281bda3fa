/// What a session remembers about its own calls, shared by every call event stream of the session:
/// the calls it placed, and those it is hanging up itself (so their end reads as a local hangup).
struct VoiceLedger: Sendable {
    var placed: Set<CallID> = []
    var hangingUp: Set<CallID> = []
    var answered: Set<CallID> = []
}
