import Media
import Wire

/// What a leg hears and who hears it in its conversation's mix, whatever carries its audio (a phone, SIP or
/// websocket line, an app's WebRTC): the NCCO `conversation` action's `mute`, `canHear` and `canSpeak` (leg
/// uuids) and, while a moderated conversation waits for a leg that starts it, only the music on hold. (The
/// member's own mute and earmuff, `member:media`, are added by `Rooms`.)
public enum ConversationPolicy {
    /// `member` maps a leg uuid to its member in this conversation (nil: not here, so left out of the lists
    /// until it comes; the mixes are worked out again then).
    public static func mix(conversation c: NCCOAction.Conversation?, started: Bool, holdMusic: MixerParticipantID?,
                           member: (String) -> String?) -> MemberMix {
        if let c, !c.startOnEnter, !started {
            // An attendee waiting for the moderator: nobody hears it, it hears the music (or nothing).
            return MemberMix(muted: true, earmuffed: holdMusic == nil, canHear: [], players: holdMusic.map { [$0] } ?? [])
        }
        return MemberMix(muted: c?.mute == true, canHear: c?.canHear.map { $0.compactMap(member) }, canSpeak: c?.canSpeak.map { $0.compactMap(member) })
    }
}
