/// How the keys we send are paced, in the media (RFC 4733 events, `RTPLeg.sendDigit`) or in the signalling
/// (SIP INFO, `UserAgentCore.sendKey`): each key lasts `keyMilliseconds`, `gapMilliseconds` apart, and `p` is a
/// pause of `pauseMilliseconds`.
public enum KeyPacing {
    public static let keyMilliseconds = 100
    public static let gapMilliseconds = 60
    public static let pauseMilliseconds = 500
}
