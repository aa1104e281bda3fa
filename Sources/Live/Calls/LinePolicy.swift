import Media
import Wire

/// What a phone, SIP or websocket leg's line hears and who hears it in its conversation's mixer: the NCCO
/// `conversation` action's `mute`, `canHear` and `canSpeak` (leg uuids), the Voice API's mute and earmuff,
/// and, while a moderated conversation waits for a leg that starts it, only the music on hold.
public enum LinePolicy {
    /// `line` maps a leg uuid to its line in this conversation (nil: not here yet, so not heard or hearing
    /// until it comes; the options are worked out again then).
    public static func options(conversation c: NCCOAction.Conversation?, muted: Bool, earmuffed: Bool, started: Bool,
                               holdMusic: MixerParticipantID?, line: (String) -> MixerParticipantID?) -> MixerParticipantOptions {
        if let c, !c.startOnEnter, !started {
            // An attendee waiting for the moderator: nobody hears it, it hears the music (or nothing).
            return MixerParticipantOptions(muted: true, earmuffed: holdMusic == nil || earmuffed, canHear: holdMusic.map { [$0] })
        }
        return MixerParticipantOptions(muted: muted || c?.mute == true, earmuffed: earmuffed,
                                       canHear: c?.canHear.map { $0.compactMap(line) }, canSpeak: c?.canSpeak.map { $0.compactMap(line) })
    }
}
