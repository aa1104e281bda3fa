import Audio

/// Where published audio comes from: 20 ms mono frames at 48 kHz, pulled once per frame on the
/// media thread. Return false when there is no more (the stream then sends silence).
///
/// A source is handed to one media stream and read only on its thread from then on.
public protocol AudioSource: AnyObject, Sendable {
    func read(into frame: inout AudioFrame) -> Bool
}

/// Where received audio goes: one decoded 20 ms frame at a time, per remote member, on the
/// media thread (keep the work short; hand heavy work elsewhere).
public protocol AudioSink: AnyObject, Sendable {
    func receive(_ frame: AudioFrame, from member: String)
}
