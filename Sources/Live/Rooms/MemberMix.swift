import Media

/// What a member hears and who hears it in its conversation's mix, by member id: a call leg's NCCO
/// `conversation` options (`mute`, `canHear`, `canSpeak`, a moderated conversation's wait). `Rooms` applies it,
/// with the member's own mute and earmuff (`member:media`), to each of the member's participants (its phone line, its
/// sockets with media) now and whenever one comes, and mixes the room while a member has one that is not
/// the default.
public struct MemberMix: Sendable, Hashable {
    /// Not heard by anyone.
    public var muted = false
    /// Hears nothing.
    public var earmuffed = false
    /// When set, the only members it hears (with `players`).
    public var canHear: [String]?
    /// When set, the only members who hear it.
    public var canSpeak: [String]?
    /// Players it hears beside `canHear`'s members (the music on hold).
    public var players: [MixerParticipantID] = []

    public init(muted: Bool = false, earmuffed: Bool = false, canHear: [String]? = nil, canSpeak: [String]? = nil,
                players: [MixerParticipantID] = []) {
        self.muted = muted
        self.earmuffed = earmuffed
        self.canHear = canHear
        self.canSpeak = canSpeak
        self.players = players
    }

    /// Everyone hears it and it hears everyone: nothing to apply.
    public var isDefault: Bool { self == MemberMix() }

    /// The mixer options of each of the member's participants, given every member's participants now.
    public func options(participants: (String) -> [MixerParticipantID]) -> MixerParticipantOptions {
        MixerParticipantOptions(muted: muted, earmuffed: earmuffed, canHear: canHear.map { $0.flatMap(participants) + players },
                                canSpeak: canSpeak.map { $0.flatMap(participants) })
    }
}
