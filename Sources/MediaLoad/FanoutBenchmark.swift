import Crypto
import Glibc
import Media
import SRTP
import Wire

/// In-process measurement of the forwarding path, without sockets or peers: one producer
/// to N consumers (each on its own transport, as in an audio room), starting from SRTP
/// packets in a receive buffer and ending in protected datagrams queued for `sendmmsg`.
///
/// Covers: demultiplexing, 5-tuple lookup, SRTP unprotect, producer bookkeeping (stats,
/// NACK tracking, retransmission buffer copy), per-consumer copy + rewrite + SRTP protect.
/// Not covered: the `recvmmsg`/`sendmmsg` system calls (see the UDP load benchmark). The worker
/// side is Media's `ForwardingHarness`; this builds the input, measures memory and reports.
public enum FanoutBenchmark {
    public struct Result: Sendable {
        public var consumers: Int
        public var inputPackets: Int
        public var outputPackets: UInt64
        public var seconds: Double
        public var outputPacketsPerSecond: Double { Double(outputPackets) / seconds }
        public var nanosecondsPerOutputPacket: Double { seconds * 1e9 / Double(outputPackets) }
        /// Resident memory added per consumer with its own transport (SRTP contexts, ICE
        /// state), in steady state (DTLS state released), from /proc/self/statm.
        public var bytesPerConsumerTransport: Double
        /// Resident memory added per extra consumer on an existing transport.
        public var bytesPerConsumer: Double
    }

    /// What the producer sends: Opus, one VP8 stream, or VP8 in three simulcast layers (RFC 8853), the input's
    /// packets taking turns among them, named by the RID header extension, every consumer sending the layer
    /// listed last (the others' packets reach each consumer and are dropped there). VP8 packets carry
    /// abs-send-time, as a browser's do, which the producer overwrites with the server's time.
    public enum Source: String, Sendable {
        case opus, vp8, simulcast
    }

    /// Runs `packets` input packets of `payloadSize` bytes through one producer fanned out
    /// to `consumers` consumers, protected with `profile`.
    public static func run(
        consumers: Int, packets: Int = 20_000, payloadSize: Int = 160, profile: SRTPProfile = .aes128CMSHA1_80,
        source: Source = .opus
    ) throws -> Result {
        let harness = try ForwardingHarness()
        let keys = SRTPKeys(
            localKey: [UInt8](repeating: 1, count: profile.keyLength), localSalt: [UInt8](repeating: 2, count: profile.saltLength),
            remoteKey: [UInt8](repeating: 1, count: profile.keyLength), remoteSalt: [UInt8](repeating: 2, count: profile.saltLength))
        let router = RouterID(rawValue: "bench")
        harness.createRouter(router)

        let publisherAddress = PeerAddress(ipv4: 0x7F00_0001, port: 40_000)
        let publisher = TransportID(rawValue: "pub")
        try harness.createTransport(publisher, router: router, connect: false)
        let producer = ProducerID(rawValue: "producer")
        let layers = source == .simulcast ? ["q", "h", "f"] : []
        try harness.produce(publisher, producer: producer, parameters: source == .opus
            ? ProducerParameters(kind: .audio, mid: "0", codec: .opus, ssrc: 0x1234_5678)
            : ProducerParameters(kind: .video, mid: "0", codec: .vp8, ssrc: layers.isEmpty ? 0x1234_5678 : nil,
                                 extensions: RTPExtensionIDs(absSendTime: sendTimeExtension, rid: ridExtension), simulcast: layers))
        try harness.install(publisher, profile: profile, keys: keys, address: publisherAddress)

        let rssBefore = residentBytes()
        for i in 0..<consumers {
            let id = TransportID(rawValue: "sub\(i)")
            try harness.createTransport(id, router: router, connect: true)
            try harness.consume(id, consumer: ConsumerID(rawValue: "c\(i)"), producer: producer)
            try harness.install(
                id, profile: profile, keys: keys, address: PeerAddress(ipv4: 0x7F00_0001, port: UInt16(41_000 + i % 20_000)))
        }
        let rssAfter = residentBytes()
        // Consumers sharing one subscriber transport (a participant receiving many tracks).
        let shared = TransportID(rawValue: "shared")
        try harness.createTransport(shared, router: router, connect: false)
        try harness.install(shared, profile: profile, keys: keys, address: PeerAddress(ipv4: 0x7F00_0002, port: 1))
        let extra = max(consumers, 1000)
        let rssShared = residentBytes()
        for i in 0..<extra { try harness.consume(shared, consumer: ConsumerID(rawValue: "s\(i)"), producer: producer) }
        let rssSharedAfter = residentBytes()
        for i in 0..<extra { harness.closeConsumer(ConsumerID(rawValue: "s\(i)")) }

        // What the publisher would send: protected with the same keys.
        let sender = try SRTPTransform(profile: profile, masterKey: keys.localKey, masterSalt: keys.localSalt, direction: .outbound)
        let stride = 256 + payloadSize
        let input = UnsafeMutableRawPointer.allocate(byteCount: packets * stride, alignment: 16)
        defer { input.deallocate() }
        var lengths = [Int](repeating: 0, count: packets)
        for i in 0..<packets {
            let p = input + i * stride
            p.initializeMemory(as: UInt8.self, repeating: 0x42, count: stride)
            Bytes.setByte(p, 0, 0x80)
            Bytes.setByte(p, 1, source == .opus ? RTPCodec.opus.payloadType : RTPCodec.vp8.payloadType)
            var header = 12
            if layers.isEmpty {
                Bytes.put16(p, 2, UInt16(truncatingIfNeeded: i))
                Bytes.put32(p, 4, UInt32(truncatingIfNeeded: i * 960))
                Bytes.put32(p, 8, 0x1234_5678)
            } else {
                // Layer i % 3, on its own SSRC and sequence.
                let layer = i % layers.count
                Bytes.put16(p, 2, UInt16(truncatingIfNeeded: i / layers.count))
                Bytes.put32(p, 4, UInt32(truncatingIfNeeded: i / layers.count * 3000))
                Bytes.put32(p, 8, 0x1000_0000 + UInt32(layer))
            }
            if source != .opus {
                // One-byte header extensions (RFC 8285): abs-send-time, and a simulcast layer's RID.
                Bytes.setByte(p, 0, 0x90)
                Bytes.put16(p, 12, 0xBEDE)
                Bytes.put16(p, 14, 2)
                Bytes.setByte(p, 16, sendTimeExtension << 4 | 2)
                Bytes.put24(p, 17, UInt32(truncatingIfNeeded: i) & 0xFF_FFFF)
                Bytes.put32(p, 20, 0)
                if !layers.isEmpty {
                    Bytes.setByte(p, 20, ridExtension << 4)
                    Bytes.setByte(p, 21, layers[i % layers.count].utf8.first!)
                }
                header = 24
            }
            if source != .opus {
                // Every packet a VP8 key frame's start (S=1, P=0): consumers send from the first one on.
                Bytes.setByte(p, header, 0x10)
                Bytes.setByte(p, header + 1, 0x00)
            }
            var length = header + payloadSize
            _ = sender.protectRTP(p, length: &length, capacity: stride)
            lengths[i] = length
        }

        let (output, seconds) = harness.forward(input, stride: stride, lengths: lengths, from: publisherAddress)
        harness.closeRouter(router)
        return Result(
            consumers: consumers, inputPackets: packets, outputPackets: output, seconds: seconds,
            bytesPerConsumerTransport: consumers > 0 ? Double(max(0, rssAfter - rssBefore)) / Double(consumers) : 0,
            bytesPerConsumer: Double(max(0, rssSharedAfter - rssShared)) / Double(extra))
    }

    static let ridExtension: UInt8 = 10
    static let sendTimeExtension: UInt8 = 3

    static func residentBytes() -> Int {
        guard let file = fopen("/proc/self/statm", "r") else { return 0 }
        defer { fclose(file) }
        var size = 0
        var resident = 0
        guard fscanf_statm(file, &size, &resident) else { return 0 }
        return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    private static func fscanf_statm(_ file: UnsafeMutablePointer<FILE>, _ size: inout Int, _ resident: inout Int) -> Bool {
        var line = [CChar](repeating: 0, count: 256)
        guard fgets(&line, 256, file) != nil else { return false }
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let fields = text.split(separator: " ")
        guard fields.count >= 2, let s = Int(fields[0]), let r = Int(fields[1]) else { return false }
        size = s
        resident = r
        return true
    }
}
