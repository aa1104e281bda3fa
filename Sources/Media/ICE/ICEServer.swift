import Crypto
import Wire

/// The ICE-lite responder of one transport (RFC 8445 §2.5, §7.3): answers connectivity
/// checks, picks the path to send on, and tracks consent (RFC 7675).
///
/// Sans-I/O: the worker hands it each Binding request with the bytes it was parsed from,
/// the source address and `now`; it returns the response to send and what changed. A lite
/// agent is always controlled, never sends checks, and nominates nothing itself.
///
/// Path selection: the first valid check selects its source address (some controlling
/// agents, aiortc among them, never send USE-CANDIDATE to a lite peer); a valid check with
/// USE-CANDIDATE selects its address; and a valid check from a new address switches to
/// it when the selected one has gone quiet (a mobile peer that changed networks).
final class ICEServer {
    enum State: Sendable, Hashable {
        case new
        /// A path is selected; media may flow.
        case connected
        /// The controlling agent nominated the selected path.
        case completed
        /// No valid check for `consentTimeout`: the transport must stop sending.
        case failed
    }

    /// What one request produced.
    struct Outcome {
        /// Response bytes to send back to the source address (nil: stay silent).
        var response: [UInt8]?
        /// Set when this request changed the selected address.
        var selected: PeerAddress?
        /// Set when the state changed.
        var state: State?
        /// True when the request passed authentication (its source may carry media).
        var valid = false
    }

    /// RFC 7675 §5.1: consent expires 30 s after the last response.
    static let consentTimeout: UInt64 = 30_000_000_000
    /// A selected path with no check for this long may be replaced by a fresh one.
    static let staleSelectionAfter: UInt64 = 6_000_000_000
    /// Bound on remembered source addresses, so a spraying peer cannot grow memory.
    static let maxTuples = 8

    let local: ICEParameters
    /// The peer's ufrag, once its description is known; checks naming another are refused.
    var remoteUsernameFragment: String?
    private(set) var state: State = .new
    private(set) var selected: PeerAddress?
    /// Validated source addresses with the time of their last valid check.
    private(set) var tuples: [(address: PeerAddress, lastCheck: UInt64)] = []
    private var lastConsent: UInt64 = 0
    private let hmac: STUNHMACSHA1 = { key, data in HMAC.sha1(key: key, data: data) }

    init(local: ICEParameters) {
        self.local = local
    }

    var passwordBytes: [UInt8] { Array(local.password.utf8) }

    /// Handles a Binding request already routed here by its USERNAME.
    func handleRequest(_ request: STUNMessage, bytes: UnsafeRawBufferPointer, from source: PeerAddress, now: UInt64) -> Outcome {
        var outcome = Outcome()
        guard request.type == .bindingRequest, state != .failed else { return outcome }
        // RFC 8489 §9.1.3: without USERNAME or MESSAGE-INTEGRITY the request is malformed.
        guard let username = request.username, request.integrityOffset != nil else {
            outcome.response = errorResponse(request, .badRequest, signed: false)
            return outcome
        }
        let parts = username.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == local.usernameFragment[...],
              remoteUsernameFragment == nil || parts[1] == remoteUsernameFragment![...] else {
            outcome.response = errorResponse(request, .unauthorized, signed: false)
            return outcome
        }
        guard request.verifyIntegrity(in: bytes, key: passwordBytes, hmacSHA1: hmac) else {
            outcome.response = errorResponse(request, .unauthorized, signed: false)
            return outcome
        }
        let unknown = request.unknownComprehensionRequired
        guard unknown.isEmpty else {
            outcome.response = errorResponse(request, .unknownAttribute, unknown: unknown, signed: true)
            return outcome
        }
        // RFC 8445 §7.3.1.1: a lite agent is controlled. A peer that also claims to be
        // controlled must switch roles, which a 487 tells it to do.
        if let role = request.iceRole, !role.controlling {
            outcome.response = errorResponse(request, .roleConflict, signed: true)
            return outcome
        }
        outcome.valid = true
        lastConsent = now
        remember(source, now: now)
        let nominated = request.useCandidate
        var switchTo: PeerAddress?
        if selected == nil {
            switchTo = source
        } else if selected != source {
            if nominated {
                switchTo = source
            } else if let current = tuples.first(where: { $0.address == selected }),
                      now &- current.lastCheck > ICEServer.staleSelectionAfter {
                switchTo = source
            }
        }
        if let switchTo {
            selected = switchTo
            outcome.selected = switchTo
        }
        let newState: State = (nominated || state == .completed) ? .completed : .connected
        if newState != state {
            state = newState
            outcome.state = newState
        }
        let response = STUNMessage.bindingSuccess(to: request, mappedAddress: source.stunAddress)
        outcome.response = try? response.serialize(integrityKey: passwordBytes, hmacSHA1: hmac, fingerprint: true)
        return outcome
    }

    /// When `tick` next has work: consent's expiry, unless a check refreshes it first (none before a
    /// path is connected).
    var consentDeadline: UInt64 {
        state == .connected || state == .completed ? lastConsent &+ ICEServer.consentTimeout &+ 1 : .max
    }

    /// Checks consent; returns `.failed` once, when it expires.
    func tick(now: UInt64) -> State? {
        guard state == .connected || state == .completed else { return nil }
        if now &- lastConsent > ICEServer.consentTimeout {
            state = .failed
            return .failed
        }
        return nil
    }

    /// True if `address` passed a check (media from it is accepted).
    func isValidated(_ address: PeerAddress) -> Bool { tuples.contains { $0.address == address } }

    private func remember(_ address: PeerAddress, now: UInt64) {
        if let i = tuples.firstIndex(where: { $0.address == address }) {
            tuples[i].lastCheck = now
            return
        }
        if tuples.count >= ICEServer.maxTuples {
            // Forget the quietest path that is not the selected one.
            if let victim = tuples.indices.filter({ tuples[$0].address != selected })
                .min(by: { tuples[$0].lastCheck < tuples[$1].lastCheck }) {
                tuples.remove(at: victim)
            }
        }
        tuples.append((address, now))
    }

    /// The source addresses it remembers (at most `maxTuples`; the worker routes no others here).
    var addresses: [PeerAddress] { tuples.map(\.address) }

    private func errorResponse(
        _ request: STUNMessage, _ code: STUNErrorCode, unknown: [STUNAttributeType] = [], signed: Bool
    ) -> [UInt8]? {
        let message = STUNMessage.errorResponse(to: request, error: code, unknownAttributes: unknown)
        return try? message.serialize(integrityKey: signed ? passwordBytes : nil, hmacSHA1: hmac, fingerprint: true)
    }
}
