import Testing
@testable import Wire

@Suite("RTCP packets")
struct RTCPPacketTests {
    static let block = ReportBlock(
        ssrc: 0x0102_0304, fractionLost: 25, cumulativeLost: -3, extendedHighestSequence: 0x0001_FFFF,
        jitter: 40, lastSenderReport: 0xAABB_CCDD, delaySinceLastSenderReport: 65536)

    static let samples: [RTCPPacket] = [
        .senderReport(SenderReport(ssrc: 1, ntpTimestamp: 0xE8F1_2345_6789_ABCD, rtpTimestamp: 90000, packetCount: 10,
                                   octetCount: 1000, reports: [block])),
        .senderReport(SenderReport(ssrc: 1, ntpTimestamp: 0, rtpTimestamp: 0, packetCount: 0, octetCount: 0,
                                   profileExtensions: [1, 2, 3])),
        .receiverReport(ReceiverReport(ssrc: 2, reports: [block, ReportBlock(ssrc: 9, cumulativeLost: 0x7F_FFFF)])),
        .receiverReport(ReceiverReport(ssrc: 2)),
        .sourceDescription(SourceDescription(source: 0x1234, cname: "k3nLQ9Zs+y1z2XvU")),
        .sourceDescription(SourceDescription(chunks: [
            .init(source: 1, items: [.init(type: .cname, text: "abc"), .init(type: .tool, text: "switchboard")]),
            .init(source: 2, items: []),
        ])),
        .goodbye(Goodbye(sources: [1, 2, 3], reason: "bye")),
        .goodbye(Goodbye(sources: [])),
        .nack(GenericNACK(senderSSRC: 1, mediaSSRC: 2, lost: [100, 101, 116, 117, 200])),
        .pictureLossIndication(PictureLossIndication(senderSSRC: 1, mediaSSRC: 0xFEED)),
        .fullIntraRequest(FullIntraRequest(senderSSRC: 1, entries: [.init(ssrc: 5, sequenceNumber: 7), .init(ssrc: 6, sequenceNumber: 255)])),
        .remb(ReceiverEstimatedMaxBitrate(senderSSRC: 1, bitrate: 2_500_000, ssrcs: [0xA, 0xB])),
        .transportFeedback(TransportFeedback(
            senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 65530, referenceTime: 0xFF_FFFF, feedbackPacketCount: 9,
            packets: [.received(delta: 4), .notReceived, .received(delta: 300), .received(delta: -5), .received(delta: 0)])),
        .unknown(RTCPUnknownPacket(packetType: 204, count: 3, body: [0, 0, 0, 1, 0x6E, 0x61, 0x6D, 0x65])),
        .unknown(RTCPUnknownPacket(packetType: 205, count: 3, body: [0, 0, 0, 1, 0, 0, 0, 2])),
    ]

    @Test("every packet type round-trips alone", arguments: samples)
    func roundTrip(packet: RTCPPacket) throws {
        let bytes = try packet.serialize()
        #expect(bytes.count % 4 == 0)
        #expect(try RTCPPacket.parseCompound(bytes) == [packet])
    }

    @Test("a compound of all types round-trips and iterates without allocating")
    func compound() throws {
        let bytes = try RTCPPacket.serializeCompound(Self.samples)
        #expect(try RTCPPacket.parseCompound(bytes) == Self.samples)
        var count = 0
        try bytes.withUnsafeBytes { raw in
            var iterator = RTCPCompoundIterator(raw)
            while let (header, range) = try iterator.next() {
                #expect(header.byteLength == range.count)
                count += 1
            }
        }
        #expect(count == Self.samples.count)
    }

    @Test("a Chromium-style SR + SDES compound decodes")
    func capturedCompound() throws {
        let bytes = hexBytes("""
            80c80006 6a8e5c61 e9a6b4f1 3d70a3d7 0001d4c0 00000032 00001f40
            81ca0006 6a8e5c61 01106b336e4c51395a732b79317a325876 550000
            """)
        let packets = try RTCPPacket.parseCompound(bytes)
        guard case .senderReport(let sr) = packets.first, case .sourceDescription(let sdes) = packets.last else {
            Issue.record("unexpected \(packets)")
            return
        }
        #expect(sr.ssrc == 0x6A8E_5C61 && sr.rtpTimestamp == 120_000 && sr.packetCount == 50 && sr.octetCount == 8000)
        #expect(sr.compactNTP == 0xB4F1_3D70)
        #expect(sdes.chunks.first?.cname == "k3nLQ9Zs+y1z2XvU")
        #expect(try RTCPPacket.serializeCompound(packets) == bytes)
    }

    @Test("NACK expands PID+BLP to lost sequence numbers, across the wrap")
    func nackExpansion() throws {
        let nack = GenericNACK(senderSSRC: 1, mediaSSRC: 2, lost: [65534, 65535, 0, 5, 14, 40])
        #expect(nack.pairs == [.init(packetID: 65534, lostBitmask: 0x8043), .init(packetID: 40, lostBitmask: 0)])
        #expect(nack.lostSequenceNumbers == [65534, 65535, 0, 5, 14, 40])
        let parsed = try RTCPPacket.parseCompound(hexBytes("81cd0003 00000001 00000002 0064 8001"))
        guard case .nack(let n) = parsed.first else { Issue.record("not a NACK"); return }
        #expect(n.lostSequenceNumbers == [100, 101, 116])
    }

    @Test("REMB mantissa and exponent encode the bitrate", arguments: [
        (UInt64(0), UInt32(0), UInt8(0)), (262_143, 262_143, 0), (262_144, 131_072, 1), (2_500_000, 156_250, 4),
        (1_000_000_000, 244_140, 12),
    ])
    func remb(bitrate: UInt64, mantissa: UInt32, exponent: UInt8) throws {
        let remb = ReceiverEstimatedMaxBitrate(senderSSRC: 1, bitrate: bitrate, ssrcs: [3])
        #expect(remb.mantissa == mantissa && remb.exponent == exponent)
        #expect(remb.bitrate <= bitrate && bitrate - remb.bitrate < 1 << UInt64(exponent))
        let huge = ReceiverEstimatedMaxBitrate(senderSSRC: 0, mediaSSRC: 0, mantissa: 0x3_FFFF, exponent: 63, ssrcs: [])
        #expect(huge.bitrate == .max)
    }

    @Test("transport-cc decodes run-length, 1-bit and 2-bit chunks")
    func transportCCChunks() throws {
        // base 10, count 20, ref 0x000001, fb 2; chunks: 1-bit vector of 14 (all received but #2),
        // run-length of 4 × small, 2-bit vector [large, notReceived].
        let chunk1: UInt16 = 0x8000 | 0b11_0111_1111_1111
        let body = hexBytes("8fcd0000 00000001 00000002 000a 0014 000001 02")
            + [UInt8(chunk1 >> 8), UInt8(chunk1 & 0xFF)] + hexBytes("2004") + hexBytes("e000")
            + Array(repeating: 4, count: 13) + Array(repeating: 1, count: 4) + hexBytes("ff38")
        var bytes = body
        while bytes.count % 4 != 0 { bytes.append(0) }
        bytes[3] = UInt8(bytes.count / 4 - 1)
        guard case .transportFeedback(let tcc) = try RTCPPacket.parseCompound(bytes).first else {
            Issue.record("not transport-cc"); return
        }
        #expect(tcc.baseSequenceNumber == 10 && tcc.packets.count == 20 && tcc.feedbackPacketCount == 2)
        #expect(tcc.packets[2] == .notReceived)
        #expect(tcc.packets[0] == .received(delta: 4) && tcc.packets[14] == .received(delta: 1))
        #expect(tcc.packets[18] == TransportFeedback.PacketResult(status: .largeDelta, delta: -200))
        #expect(tcc.packets[19] == .notReceived)
        let arrivals = tcc.arrivals
        #expect(arrivals.count == 18)
        #expect(arrivals.first! == (10, 64_000 + 1_000))
        #expect(try RTCPPacket.parseCompound(try RTCPPacket.transportFeedback(tcc).serialize()) == [.transportFeedback(tcc)])
    }

    @Test("transport-cc builder fills gaps and chooses delta sizes")
    func transportCCBuilder() throws {
        var builder = TransportFeedbackBuilder(senderSSRC: 1, mediaSSRC: 2, feedbackPacketCount: 0)
        #expect(builder.build() == nil)
        do { let added = builder.add(sequenceNumber: 65535, arrivalMicroseconds: 1_000_000); #expect(added) }
        do { let added = builder.add(sequenceNumber: 0, arrivalMicroseconds: 1_001_000); #expect(added) }
        do { let added = builder.add(sequenceNumber: 3, arrivalMicroseconds: 1_200_000); #expect(added) }
        do { let added = builder.add(sequenceNumber: 4, arrivalMicroseconds: 1_199_000); #expect(added) }
        do { let added = builder.add(sequenceNumber: 2, arrivalMicroseconds: 1_300_000); #expect(!added) }
        do { let added = builder.add(sequenceNumber: 5, arrivalMicroseconds: 100_000_000); #expect(!added) }
        let feedback = try #require(builder.build())
        #expect(feedback.baseSequenceNumber == 65535)
        #expect(feedback.packets.map(\.status) == [.smallDelta, .smallDelta, .notReceived, .notReceived, .largeDelta, .largeDelta])
        #expect(feedback.arrivals.map(\.arrivalMicroseconds) == [1_000_000, 1_001_000, 1_200_000, 1_199_000])
        #expect(feedback.arrivals.map(\.sequenceNumber) == [65535, 0, 3, 4])
        let parsed = try RTCPPacket.parseCompound(try RTCPPacket.transportFeedback(feedback).serialize())
        #expect(parsed == [.transportFeedback(feedback)])
    }

    @Test("long runs use run-length chunks", arguments: [1, 13, 14, 15, 100, 8191, 8192, 20000])
    func transportCCLongRuns(count: Int) throws {
        let packets = (0..<count).map { $0 % 3000 == 2999 ? TransportFeedback.PacketResult.received(delta: 1) : .notReceived }
        let feedback = TransportFeedback(senderSSRC: 0, mediaSSRC: 0, baseSequenceNumber: 0, referenceTime: 0,
                                         feedbackPacketCount: 0, packets: packets)
        let bytes = try RTCPPacket.transportFeedback(feedback).serialize()
        #expect(try RTCPPacket.parseCompound(bytes) == [.transportFeedback(feedback)])
        #expect(bytes.count < 40 + count / 4)
    }

    @Test("unknown types are kept, not fatal, and padding is honoured")
    func unknownAndPadding() throws {
        // XR (207) then a padded PLI (P bit, 4 bytes of padding).
        let bytes = hexBytes("80cf0002 00000001 00000000 a1ce0003 00000001 00000002 00000004")
        let packets = try RTCPPacket.parseCompound(bytes)
        #expect(packets == [
            .unknown(RTCPUnknownPacket(packetType: 207, count: 0, body: [0, 0, 0, 1, 0, 0, 0, 0])),
            .pictureLossIndication(PictureLossIndication(senderSSRC: 1, mediaSSRC: 2)),
        ])
    }

    @Test("malformed compounds give precise errors", arguments: [
        (hexBytes("80c8"), RTCPError.truncated(needed: 4, available: 2)),
        (hexBytes("40c80000"), .unsupportedVersion(1)),
        (hexBytes("80c90001 00000001 80c90005"), .truncated(needed: 32, available: 12)),
        (hexBytes("a0c90001 00000001"), .invalidPadding(length: 1, available: 4) ),
        (hexBytes("a0c90001 00000000"), .invalidPadding(length: 0, available: 4)),
        (hexBytes("81c90001 00000001"), .malformed(packetType: 201, detail: "need 28 bytes, have 4")),
        (hexBytes("8fcd0004 00000001 00000002 00000005 00000000"), .malformed(packetType: 205, detail: "need 18 bytes, have 16")),
    ])
    func malformed(bytes: [UInt8], error: RTCPError) {
        if case .invalidPadding(1, _) = error {
            // A 1-byte pad on an RR with no blocks leaves a 3-byte SSRC.
            #expect(throws: RTCPError.malformed(packetType: 201, detail: "need 4 bytes, have 3")) { try RTCPPacket.parseCompound(bytes) }
            return
        }
        #expect(throws: error) { try RTCPPacket.parseCompound(bytes) }
    }
}
