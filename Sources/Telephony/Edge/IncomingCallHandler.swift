/// Takes inbound calls to numbers (and from registered devices) off the SIP edge: the Voice API's seam.
///
/// `incomingCall` runs on the edge's loop and must return quickly; the call is answered, rung or
/// rejected later through its methods, from any thread.
public protocol IncomingCallHandler: AnyObject, Sendable {
    func incomingCall(_ call: IncomingCall)
}
