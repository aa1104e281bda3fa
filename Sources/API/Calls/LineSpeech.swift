import Audio
import Runtime

/// Speech input on a line (an NCCO `input` with `speech`): one utterance found in what the mixer takes
/// from the line each tick, silence when the far end sent nothing, so the timeouts run on the mixer's
/// clock. Held by the line, on its loop; its buffer is reserved when listening starts.
struct LineSpeech {
    private struct Listening {
        var endpointer: SpeechEndpointer
        /// When the caller begins to speak (a prompt with `bargeIn` stops then), once; on the loop.
        let onStart: (() -> Void)?
        /// The ending, the utterance and its rate, once; on the loop.
        let report: (SpeechEndpointer.Ending, [Int16], Int) -> Void
    }

    private var listening: Listening?

    var active: Bool { listening != nil }

    /// From now on, listens for one utterance at `rate` with `settings`; replaces the listening in progress.
    mutating func listen(rate: SampleRate, _ settings: SpeechEndpointer.Settings, onStart: (() -> Void)?,
                         report: @escaping (SpeechEndpointer.Ending, [Int16], Int) -> Void) {
        listening = Listening(endpointer: SpeechEndpointer(rate: rate.rawValue, settings: settings), onStart: onStart, report: report)
    }

    /// Ends the listening without a report.
    mutating func stop() { listening = nil }

    /// One tick's frame at the rate listening started with (another rate is ignored).
    mutating func feed(_ frame: AudioFrame) {
        guard var s = listening, s.endpointer.rate == frame.rate.rawValue else { return }
        listening = nil  // `s` holds the only reference to the utterance's buffer: feeding it does not copy it
        let wasSpeaking = s.endpointer.speaking
        let ending = frame.withSamples { s.endpointer.feed($0) }
        if !wasSpeaking, s.endpointer.speaking { s.onStart?() }
        guard let ending else {
            listening = s
            return
        }
        s.report(ending, s.endpointer.takeSamples(), s.endpointer.rate)
    }
}

/// A line an NCCO `input` can listen to for speech (`PhoneLine`, `WebSocketLine`); every method on `loop`.
protocol SpeechListeningLine: AnyObject, Sendable {
    var loop: EventLoop { get }
    func listenForSpeech(_ settings: SpeechEndpointer.Settings, onStart: (() -> Void)?,
                         report: @escaping (SpeechEndpointer.Ending, [Int16], Int) -> Void)
    func stopListeningForSpeech()
}
