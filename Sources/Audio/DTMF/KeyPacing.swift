/// How the keys we send are paced, in the media (RFC 4733 events, `RTPLeg.sendDigit`; in-band tones,
/// `ToneCadence.keys`) or in the signalling (SIP INFO, `UserAgentCore.sendKey`): each key lasts `keyMilliseconds`,
/// `gapMilliseconds` apart, and `p` is a pause of `pauseMilliseconds`.
public enum KeyPacing {
    public static let keyMilliseconds = 100
    public static let gapMilliseconds = 60
    public static let pauseMilliseconds = 500
}

extension ToneCadence {
    /// Keys as in-band DTMF (ITU-T Q.23), paced as `KeyPacing` says, played once; characters that are neither keys
    /// nor `p` are skipped.
    public static func keys(_ digits: String) -> ToneCadence {
        var steps: [Step] = []
        for c in digits {
            if c == "p" || c == "P" {
                steps.append(.silence(KeyPacing.pauseMilliseconds))
            } else if let d = DTMFDigit(character: c) {
                steps += [Step([d.rowFrequency, d.columnFrequency], milliseconds: KeyPacing.keyMilliseconds), .silence(KeyPacing.gapMilliseconds)]
            }
        }
        return ToneCadence(steps, repeats: false)
    }
}
