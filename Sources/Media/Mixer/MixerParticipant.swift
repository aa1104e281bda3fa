import Audio

/// One participant of a `Mixer`: its slot in the `MixerCore`, its input, and the encoder and packet
/// buffer for its own mix (mix-minus-self while it is one of the mixed speakers). Everything is
/// allocated at join; the tick only fills it. Confined to the worker thread.
final class MixerParticipant {
    let id: MixerParticipantID
    let slot: MixerSlot
    var input: (any MixerInput)?
    /// The producer feeding `input` (a WebRTC microphone), whose levels come from the decoded signal.
    var producer: Producer?
    /// Where what this participant hears goes when it is not a WebRTC listener (a phone leg).
    var port: (any MixerPort)?
    var options: MixerParticipantOptions
    let encoder: OpusCodec
    /// RTP header (with the RFC 6464 extension) followed by the encoded own mix.
    let packet: UnsafeMutableRawPointer
    var packetLength = 0
    /// Tick number of the own mix in `packet` (encoded at most once per tick, however many outputs).
    var encodedTick: UInt64 = .max
    var speaking = false

    init(id: MixerParticipantID, slot: MixerSlot, options: MixerParticipantOptions, rate: SampleRate) throws(CodecError) {
        self.id = id
        self.slot = slot
        self.options = options
        var configuration = OpusCodec.Configuration()
        configuration.sampleRate = rate
        encoder = try OpusCodec(configuration)
        packet = .allocate(byteCount: Mixer.packetCapacity, alignment: 16)
        Mixer.writeHeader(packet)
    }

    deinit { packet.deallocate() }
}
