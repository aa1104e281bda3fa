import Wire

/// The media work one NCCO action needs from the mixer and the telephony edge.
public enum CallMediaCommand: Sendable, Equatable {
    /// Speech synthesis into the leg; finishes after the last loop.
    case say(NCCOAction.Talk)
    /// Audio from a URL into the leg.
    case play(NCCOAction.Stream)
    /// Listens for DTMF; digits arrive through `CallMediaEvents.digits`.
    case collectDigits(NCCOAction.Input)
    /// Listens for one utterance and recognises it; what was said arrives through `CallMediaEvents.speechFinished`.
    /// `stop(leg:)` ends the listening without a report. `bargeIn`: started while a talk or stream with `bargeIn`
    /// plays — when the caller starts speaking, media stops what plays into the leg (and only that) and reports
    /// `speechStarted`.
    case collectSpeech(NCCOAction.Input.Speech, bargeIn: Bool = false)
    /// Starts recording; the file is reported when it ends (`CallMediaEvents.recordingFinished`).
    case startRecording(NCCOAction.Record)
    /// Records the leg's conversation (`conversation` with `record: true`) until it empties, once however many
    /// legs ask.
    case recordConversation(NCCOAction.Record)
    /// Ends the leg's synchronous recording (its `endOnKey` was pressed, or the NCCO was replaced).
    case stopRecording
    /// Sends DTMF to the far end.
    case sendDigits(String)
    /// Connects the leg's audio to a conversation's mix.
    case bridge(conversationID: String, NCCOAction.Conversation)
    /// Places a leg to a phone, SIP or websocket endpoint.
    case dial(CallEndpoint, from: String?, leg: String)
    /// Listens to the answered leg for a person or a machine (and then, with `beep`, for a voicemail's
    /// beep for up to `beepTimeout` seconds); findings come back as `machineDetection` events.
    case detectMachine(beep: Bool, beepTimeout: Int)
}
