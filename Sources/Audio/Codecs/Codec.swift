/// An audio codec over 20 ms frames: encode PCM to a payload, decode a payload to PCM, and
/// conceal a frame the network lost.
///
/// Codecs carry state (Opus prediction, the last frame for concealment), so each stream owns one
/// instance, confined to the thread that runs the stream.
public protocol Codec: AnyObject {
    /// The PCM rate the codec consumes and produces.
    var sampleRate: SampleRate { get }
    /// RTP clock rate of the payload format (Opus: always 48000, RFC 7587).
    var clockRate: Int { get }

    /// Encodes one frame into `output`; returns the number of payload bytes written.
    func encode(_ frame: AudioFrame, into output: UnsafeMutableRawBufferPointer) throws(CodecError) -> Int

    /// Decodes one payload into `frame`.
    func decode(_ payload: UnsafeRawBufferPointer, into frame: inout AudioFrame) throws(CodecError)

    /// Fills `frame` for a packet that never arrived. `next` is the packet after the gap when the
    /// jitter buffer already holds it: codecs with in-band FEC (Opus) rebuild the lost frame from it.
    func conceal(next: UnsafeRawBufferPointer?, into frame: inout AudioFrame) throws(CodecError)
}
