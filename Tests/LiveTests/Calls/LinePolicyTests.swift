import Media
import Testing
import Wire
@testable import Live

@Suite("Line policy")
struct LinePolicyTests {
    let lines = ["leg-a": MixerParticipantID("la"), "leg-b": MixerParticipantID("lb")]

    func options(_ c: NCCOAction.Conversation?, muted: Bool = false, earmuffed: Bool = false, started: Bool = true,
                 hold: MixerParticipantID? = nil) -> MixerParticipantOptions {
        LinePolicy.options(conversation: c, muted: muted, earmuffed: earmuffed, started: started, holdMusic: hold) { lines[$0] }
    }

    @Test("an attendee waits unheard, hearing only the music on hold (or nothing), until the conversation starts")
    func waiting() {
        var attendee = NCCOAction.Conversation(name: "c")
        attendee.startOnEnter = false
        #expect(options(attendee, started: false, hold: MixerParticipantID("pl-1")) == MixerParticipantOptions(muted: true, canHear: [MixerParticipantID("pl-1")]))
        #expect(options(attendee, started: false) == MixerParticipantOptions(muted: true, earmuffed: true))
        #expect(options(attendee, started: true, hold: MixerParticipantID("pl-1")) == MixerParticipantOptions())
        // A leg that starts it never waits.
        #expect(options(NCCOAction.Conversation(name: "c"), started: false, hold: MixerParticipantID("pl-1")) == MixerParticipantOptions())
    }

    @Test("mute, canHear and canSpeak map leg uuids to the lines present; the Voice API's mute and earmuff add up")
    func lists() {
        var c = NCCOAction.Conversation(name: "c")
        c.canHear = ["leg-a", "leg-gone"]
        c.canSpeak = []
        #expect(options(c) == MixerParticipantOptions(canHear: [MixerParticipantID("la")], canSpeak: []))
        c.mute = true
        c.canSpeak = nil
        #expect(options(c, earmuffed: true) == MixerParticipantOptions(muted: true, earmuffed: true, canHear: [MixerParticipantID("la")]))
        #expect(options(nil, muted: true) == MixerParticipantOptions(muted: true))
    }
}
