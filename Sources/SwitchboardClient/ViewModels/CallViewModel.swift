import Foundation
import Observation
import Wire

/// A call screen as state: dial a user or number through the application, or answer or reject an
/// incoming call; ringing, answered with a running timer, ended with why; hang up, mute, DTMF.
@Observable
@MainActor
public final class CallViewModel {
    public private(set) var state: CallState = .idle
    /// The user's leg of the current (or last) call.
    public private(set) var callID: CallID?
    /// The incoming call ringing now, if any.
    public private(set) var incoming: CallInvite?
    /// Whole seconds since the call was answered; counts while it is answered.
    public private(set) var elapsedSeconds = 0
    public private(set) var muted = false
    /// The digits sent during this call.
    public private(set) var digitsSent = ""
    /// The last failed request.
    public private(set) var error: SessionError?
    /// Every leg status seen for the current call's conversation, in order.
    public private(set) var legStatuses: [LegStatusUpdate] = []

    @ObservationIgnored private let voice: Voice
    @ObservationIgnored private var listener: Task<Void, Never>?
    @ObservationIgnored private var timer: Task<Void, Never>?
    @ObservationIgnored private var answeredAt: ContinuousClock.Instant?
    @ObservationIgnored private var conversationID: String?
    @ObservationIgnored private let clock = ContinuousClock()
    /// Leg statuses that came while the call was being placed, before its id was known.
    @ObservationIgnored private var early: [LegStatusUpdate] = []

    /// Follows the calls of the session's user from now on.
    public init(session: Session) {
        voice = session.voice
        let events = voice.events()
        listener = Task { [weak self] in
            for await e in events {
                guard let self else { return }
                self.apply(e)
            }
        }
    }

    /// Places a server call to `to` (a user name or a number); `context` reaches the answer URL.
    public func dial(_ to: String, context: [String: JSONValue] = [:]) async {
        guard !isActive else { return }
        reset()
        state = .dialing
        do {
            callID = try await voice.serverCall(to: to, context: context)
            if state == .dialing { state = .ringing(incoming: false) }
            let held = early
            early = []
            for update in held { apply(.legStatus(update)) }
        } catch let e {
            error = e
            state = .ended(.failed(e))
        }
    }

    public func answer() async {
        guard let invite = incoming else { return }
        do {
            try await voice.answer(invite.callID)
            incoming = nil
            callAnswered()
        } catch let e {
            error = e
        }
    }

    public func reject() async {
        guard let invite = incoming else { return }
        do {
            try await voice.reject(invite.callID)
            incoming = nil
            end(.rejected)
        } catch let e {
            error = e
        }
    }

    public func hangUp() async {
        guard let callID, isActive else { return }
        do { try await voice.hangup(callID) } catch let e { error = e }
    }

    public func setMuted(_ muted: Bool) async {
        guard let callID else { return }
        do {
            try await voice.setMuted(muted, call: callID)
            self.muted = muted
        } catch let e {
            error = e
        }
    }

    public func sendDTMF(_ digits: String) async {
        guard let callID else { return }
        do {
            try await voice.sendDTMF(digits, call: callID)
            digitsSent += digits
        } catch let e {
            error = e
        }
    }

    var isActive: Bool {
        switch state {
        case .dialing, .ringing, .answered: true
        case .idle, .ended: false
        }
    }

    func apply(_ e: CallEvent) {
        switch e {
        case .invite(let invite):
            // One call at a time: a second invite while busy keeps ringing elsewhere.
            guard !isActive else { return }
            reset()
            incoming = invite
            callID = invite.callID
            conversationID = invite.conversationID
            state = .ringing(incoming: true)
        case .inviteCancelled(let id, let reason):
            guard id == callID, incoming != nil else { return }
            incoming = nil
            end(.inviteCancelled(reason))
        case .hangup(let id, let reason):
            guard id == callID, isActive else { return }
            end(.hangup(reason))
        case .transferred(let id, let conversation):
            guard id == callID else { return }
            conversationID = conversation
        case .legStatus(let update):
            if state == .dialing {
                if early.count < 64 { early.append(update) }
                return
            }
            if update.legID == callID { conversationID = update.conversationID }
            guard let conversationID, update.conversationID == conversationID else { return }
            legStatuses.append(update)
            // An outgoing call is answered when a leg other than the caller's answers.
            if state == .ringing(incoming: false), update.legID != callID, update.status == .answered { callAnswered() }
        }
    }

    private func callAnswered() {
        state = .answered
        let start = clock.now
        answeredAt = start
        timer?.cancel()
        timer = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                guard let self, self.state == .answered else { return }
                let seconds = Int((self.clock.now - start).components.seconds)
                if seconds != self.elapsedSeconds { self.elapsedSeconds = seconds }
            }
        }
    }

    private func end(_ reason: CallEndReason) {
        timer?.cancel()
        timer = nil
        if let answeredAt { elapsedSeconds = Int((clock.now - answeredAt).components.seconds) }
        state = .ended(reason)
    }

    private func reset() {
        callID = nil
        incoming = nil
        conversationID = nil
        elapsedSeconds = 0
        muted = false
        digitsSent = ""
        error = nil
        legStatuses = []
        answeredAt = nil
        early = []
    }
}
