import Audio

/// One participant of a `Mixer`: its slot in the `MixerCore`, its input, and the encoder and packet
/// buffer for its own mix (mix-minus-self while it is one of the mixed speakers, or a mix restricted
/// by canHear/canSpeak). A plain listener (no input, hears everyone) only ever gets the shared mix,
/// so it has no encoder: `Mixer` makes one on the control path when the participant could need its
/// own mix (`needsEncoder`), and the tick makes one only if that was not foreseen. Confined to the
/// worker thread.
final class MixerParticipant {
    let id: MixerParticipantID
    let slot: MixerSlot
    var input: (any MixerInput)?
    /// `input` when it is a WebRTC producer's: the mixer may rank it by its sender's levels and skip decoding it.
    var ranked: RTPMixerInput?
    /// Ticks left in which `ranked` is decoded whatever its level: it was among the loudest lately.
    var decodeHold = 0
    /// Its sender's level this tick (RFC 6464), while the mixer ranks.
    var tickLevel: UInt8 = 127
    /// The producer feeding `input` (a WebRTC microphone), whose levels come from the decoded signal.
    var producer: Producer?
    /// Where what this participant hears goes when it is not a WebRTC listener (a phone leg).
    var port: (any MixerPort)?
    var options: MixerParticipantOptions
    private var rate: SampleRate
    /// libopus' encoder (43 KiB), made when first needed.
    private(set) var encoder: OpusEncoder?
    /// RTP header (with the RFC 6464 extension) followed by the encoded own mix; allocated with the encoder.
    private(set) var packet: UnsafeMutableRawPointer?
    var packetLength = 0
    /// Tick number of the own mix in `packet` (encoded at most once per tick, however many outputs).
    var encodedTick: UInt64 = .max
    var speaking = false
    /// The loss its own mix's encoder plans for, from its listener's reports (`Mixer.planLoss`).
    var lossPlan = LossPlan()

    init(id: MixerParticipantID, slot: MixerSlot, options: MixerParticipantOptions, rate: SampleRate) {
        self.id = id
        self.slot = slot
        self.options = options
        self.rate = rate
    }

    deinit { packet?.deallocate() }

    /// Gets the shared mix whatever the speakers do, unless a speaker's canSpeak leaves it out.
    var isPlainListener: Bool { input == nil && port == nil && options.canHear == nil && !options.earmuffed }

    /// Could get a mix of its own: it speaks (mix-minus), or hears only some. A port gets its own mix as
    /// samples (`MixerPort.deliver`), never encoded; an earmuffed one hears nothing (a video session's streams
    /// feeding its audio connectors) until its options change, which makes the encoder then.
    var needsEncoder: Bool { port == nil && !options.earmuffed && (input != nil || options.canHear != nil) }

    /// The mixer now mixes at `rate`: an encoder made for the old rate is made again for this one.
    func retune(_ rate: SampleRate) {
        guard rate != self.rate else { return }
        self.rate = rate
        guard encoder != nil else { return }
        encoder = nil
        packet?.deallocate()
        packet = nil
        encodedTick = .max
        makeEncoder()
    }

    /// Makes the encoder and packet buffer unless they exist; false if libopus refused.
    @discardableResult
    func makeEncoder() -> Bool {
        if encoder != nil { return true }
        guard let made = try? OpusEncoder(Mixer.encoderConfiguration(rate: rate, loss: lossPlan.percent)) else { return false }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: Mixer.packetCapacity, alignment: 16)
        Mixer.writeHeader(buffer)
        encoder = made
        packet = buffer
        return true
    }
}
