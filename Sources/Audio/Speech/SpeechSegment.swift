/// A piece of a speech request after SSML is read: words to say or a pause.
public enum SpeechSegment: Sendable, Hashable {
    case text(String)
    case pause(milliseconds: Int)
}
