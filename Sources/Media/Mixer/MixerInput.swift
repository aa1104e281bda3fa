import Audio

/// A source of audio for a `Mixer`, pulled once per 20 ms tick on the worker thread.
///
/// WebRTC producers (`RTPMixerInput`), queued frames from players and speech
/// (`FrameQueueMixerInput`), and later RTP legs or WebSocket audio all plug in here. `pull` must
/// not allocate, lock or log: it runs inside the worker's tick.
protocol MixerInput: AnyObject {
    /// Writes this tick's 20 ms at the mixer's rate into `frame`; false when there is nothing to
    /// mix this tick (idle stream, empty queue).
    func pull(into frame: inout AudioFrame, now: UInt64) -> Bool
    /// True once the input will produce nothing more (a player that reached its end).
    var finished: Bool { get }
}
