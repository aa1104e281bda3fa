import Audio
import Runtime

/// Audio that enters and leaves a mixer outside WebRTC: a plain-RTP phone leg, a WebSocket
/// stream. The port is made on the mixer's worker thread (the factory gets that worker's loop, so
/// its sockets and timers live there too) and every call below happens on that thread, inside the
/// 20 ms tick: `pull` and `deliver` must not allocate, lock or log.
public protocol MixerPort: AnyObject {
    /// The far end's rate (a G.711 phone's 8 kHz). A mixer whose every participant is a port at 8 kHz
    /// mixes at 8 kHz, else at 48 kHz; a tick reads this, so a port may change it (a new codec).
    var rate: SampleRate { get }
    /// This tick's 20 ms of what the far end said, mono at the mixer's rate (`frame.rate`: 8 or 48 kHz)
    /// into `frame`; false when there is nothing to mix this tick.
    func pull(into frame: inout AudioFrame, now: UInt64) -> Bool
    /// What the port's participant hears this tick (its mix-minus, or the shared mix), mono at the mixer's
    /// rate; nil on a silent tick. Called every tick, so a port can pace what it sends by it.
    func deliver(_ heard: AudioFrame?, now: UInt64)
    /// The participant left the mixer (or the mixer closed): release sockets and timers.
    func close()
}

/// Makes a port on the mixer's worker loop.
public typealias MixerPortFactory = @Sendable (EventLoop) throws -> any MixerPort

/// A port's input side as the mixer sees it.
final class PortMixerInput: MixerInput {
    let port: any MixerPort
    init(_ port: any MixerPort) { self.port = port }
    func pull(into frame: inout AudioFrame, now: UInt64) -> Bool { port.pull(into: &frame, now: now) }
    var finished: Bool { false }
}
