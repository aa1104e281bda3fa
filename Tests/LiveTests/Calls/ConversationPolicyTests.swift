import Media
import Testing
import Wire
@testable import Live

@Suite("Conversation policy")
struct ConversationPolicyTests {
    let members = ["leg-a": "MEM-a", "leg-b": "MEM-b"]

    func mix(_ c: NCCOAction.Conversation?, started: Bool = true, hold: MixerParticipantID? = nil) -> MemberMix {
        ConversationPolicy.mix(conversation: c, started: started, holdMusic: hold) { members[$0] }
    }

    @Test("an attendee waits unheard, hearing only the music on hold (or nothing), until the conversation starts")
    func waiting() {
        var attendee = NCCOAction.Conversation(name: "c")
        attendee.startOnEnter = false
        #expect(mix(attendee, started: false, hold: MixerParticipantID("pl-1")) == MemberMix(muted: true, canHear: [], players: [MixerParticipantID("pl-1")]))
        #expect(mix(attendee, started: false) == MemberMix(muted: true, earmuffed: true, canHear: []))
        #expect(mix(attendee, started: true, hold: MixerParticipantID("pl-1")).isDefault)
        // A leg that starts it never waits.
        #expect(mix(NCCOAction.Conversation(name: "c"), started: false, hold: MixerParticipantID("pl-1")).isDefault)
    }

    @Test("mute, canHear and canSpeak map leg uuids to the members present")
    func lists() {
        var c = NCCOAction.Conversation(name: "c")
        c.canHear = ["leg-a", "leg-gone"]
        c.canSpeak = []
        #expect(mix(c) == MemberMix(canHear: ["MEM-a"], canSpeak: []))
        c.mute = true
        c.canSpeak = nil
        #expect(mix(c) == MemberMix(muted: true, canHear: ["MEM-a"]))
        #expect(mix(nil).isDefault)
    }

    @Test("a member's mix reaches every participant it has now: its line, each socket with media, and the players it hears")
    func participants() {
        let now = ["MEM-a": [MixerParticipantID("lMEM-a")], "MEM-b": [MixerParticipantID("c1"), MixerParticipantID("c2")]]
        let lookup: (String) -> [MixerParticipantID] = { now[$0] ?? [] }
        #expect(MemberMix(canHear: ["MEM-b", "MEM-gone"], canSpeak: ["MEM-a"]).options(participants: lookup)
                == MixerParticipantOptions(canHear: [MixerParticipantID("c1"), MixerParticipantID("c2")], canSpeak: [MixerParticipantID("lMEM-a")]))
        #expect(MemberMix(muted: true, canHear: [], players: [MixerParticipantID("pl-1")]).options(participants: lookup)
                == MixerParticipantOptions(muted: true, canHear: [MixerParticipantID("pl-1")]))
        #expect(MemberMix().options(participants: lookup) == MixerParticipantOptions())
    }
}
