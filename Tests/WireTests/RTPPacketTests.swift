import Testing
@testable import Wire

@Suite("RTP packets")
struct RTPPacketTests {
    static let sequenceEdges: [UInt16] = [0, 1, 32767, 32768, 65534, 65535]
    static let timestampEdges: [UInt32] = [0, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF]

    @Test("parse → serialize → parse keeps every header field", arguments: sequenceEdges, timestampEdges)
    func roundTrip(sequence: UInt16, timestamp: UInt32) throws {
        let packet = RTPPacket(
            header: RTPHeader(marker: sequence % 2 == 0, payloadType: 111, sequenceNumber: sequence,
                              timestamp: timestamp, ssrc: 0xDEAD_BEEF, csrcs: [1, 2]),
            payload: [1, 2, 3, 4, 5])
        let bytes = try packet.serialize()
        let parsed = try RTPPacket.parse(bytes)
        #expect(parsed == packet)
        #expect(try parsed.serialize() == bytes)
        let view = try RTPView.parse(bytes)
        #expect(view.headerLength == 20 && view.payloadLength == 5 && view.paddingLength == 0)
        #expect(bytes.withUnsafeBytes { RTPView.sequenceNumber(in: $0) } == sequence)
        #expect(bytes.withUnsafeBytes { RTPView.timestamp(in: $0) } == timestamp)
    }

    @Test("a captured Opus packet with audio level and abs-send-time decodes")
    func capturedOpus() throws {
        // V=2 X=1 PT=111 seq=0x1234 ts=0x00001000 ssrc=0x11223344, 0xBEDE length 2:
        // id 1 audio level (V, -42 dBov), id 3 abs-send-time 0xABCDEF, padding.
        let bytes = hexBytes("90 6f 1234 00001000 11223344 bede 0002 10 aa 32 abcdef 00 00 fc ff fe")
        let (header, view) = try RTPHeader.parse(bytes)
        #expect(header.payloadType == 111 && !header.marker && header.ssrc == 0x1122_3344)
        #expect(header.headerExtension?.isOneByte == true)
        #expect(header.headerExtension?.elements == [
            RTPHeaderExtensionElement(id: 1, value: [0xAA]), RTPHeaderExtensionElement(id: 3, value: [0xAB, 0xCD, 0xEF]),
        ])
        #expect(view.payloadOffset == 24 && view.payloadLength == 3)
        bytes.withUnsafeBytes { b in
            #expect(view.audioLevel(id: 1, in: b)! == (true, 42))
            #expect(view.absSendTime(id: 3, in: b) == 0xAB_CDEF)
            #expect(view.transportSequenceNumber(id: 5, in: b) == nil)
        }
    }

    @Test("one-byte and two-byte extensions round-trip", arguments: [
        RTPHeaderExtension.oneByte([.audioLevel(id: 1, voiceActivity: false, level: 127), .transportSequenceNumber(id: 5, 65535),
                                    .mid(id: 9, "0"), RTPHeaderExtensionElement(id: 14, value: Array(repeating: 7, count: 16))]),
        RTPHeaderExtension.twoByte([RTPHeaderExtensionElement(id: 200, value: []), .mid(id: 15, "video-main"),
                                    RTPHeaderExtensionElement(id: 1, value: Array(repeating: 9, count: 255))], appBits: 3),
        RTPHeaderExtension(profile: 0x1234, rawData: [1, 2, 3, 4, 5, 6, 7, 8]),
        RTPHeaderExtension.oneByte([]),
    ])
    func extensionsRoundTrip(block: RTPHeaderExtension) throws {
        let packet = RTPPacket(
            header: RTPHeader(payloadType: 96, sequenceNumber: 7, timestamp: 9, ssrc: 3, headerExtension: block),
            payload: [0xFF])
        let bytes = try packet.serialize()
        #expect((bytes.count - 1) % 4 == 0)
        #expect(try RTPPacket.parse(bytes) == packet)
    }

    @Test("elements that do not fit their form are rejected when serializing", arguments: [
        RTPHeaderExtension.oneByte([RTPHeaderExtensionElement(id: 15, value: [1])]),
        RTPHeaderExtension.oneByte([RTPHeaderExtensionElement(id: 1, value: [])]),
        RTPHeaderExtension.oneByte([RTPHeaderExtensionElement(id: 1, value: Array(repeating: 0, count: 17))]),
        RTPHeaderExtension.twoByte([RTPHeaderExtensionElement(id: 0, value: [1])]),
    ])
    func invalidElements(block: RTPHeaderExtension) {
        let packet = RTPPacket(header: RTPHeader(payloadType: 96, sequenceNumber: 0, timestamp: 0, ssrc: 0, headerExtension: block), payload: [])
        #expect(throws: RTPError.self) { try packet.serialize() }
    }

    @Test("padding is stripped from the payload and restored", arguments: [1, 4, 255])
    func padding(length: Int) throws {
        let packet = RTPPacket(header: RTPHeader(payloadType: 100, sequenceNumber: 1, timestamp: 2, ssrc: 3),
                               payload: [9, 9, 9], paddingLength: length)
        let bytes = try packet.serialize()
        #expect(bytes[0] & 0x20 != 0)
        #expect(bytes.count == 12 + 3 + length)
        let view = try RTPView.parse(bytes)
        #expect(view.payloadLength == 3 && view.paddingLength == length)
        #expect(try RTPPacket.parse(bytes) == packet)
    }

    @Test("truncated and malformed packets give precise errors", arguments: [
        (hexBytes("80 60 0001"), RTPError.truncated(needed: 12, available: 4)),
        (hexBytes("40 60 0001 00000000 00000000"), .unsupportedVersion(1)),
        (hexBytes("82 60 0001 00000000 00000000 00000001"), .truncated(needed: 20, available: 16)),
        (hexBytes("90 60 0001 00000000 00000000 bede"), .truncated(needed: 16, available: 14)),
        (hexBytes("90 60 0001 00000000 00000000 bede 0002 10aa0000"), .truncated(needed: 24, available: 20)),
        (hexBytes("a0 60 0001 00000000 00000000 0102 00"), .invalidPadding(length: 0, available: 3)),
        (hexBytes("a0 60 0001 00000000 00000000 0102 04"), .invalidPadding(length: 4, available: 3)),
        (hexBytes("a0 60 0001 00000000 00000000"), .invalidPadding(length: 0, available: 0)),
        (hexBytes("90 60 0001 00000000 00000000 bede 0001 13aa0000"), .invalidExtensionElement(id: 1, length: 4)),
    ])
    func malformed(bytes: [UInt8], error: RTPError) {
        #expect(throws: error) { try RTPPacket.parse(bytes) }
    }

    @Test("a time becomes abs-send-time's 6.18 fixed-point seconds, wrapping every 64 s")
    func absSendTimeFromNanoseconds() {
        #expect(RTPHeaderExtensionElement.absSendTime(nanoseconds: 0) == 0)
        #expect(RTPHeaderExtensionElement.absSendTime(nanoseconds: 1_500_000_000) == 3 << 17)
        #expect(RTPHeaderExtensionElement.absSendTime(nanoseconds: 64_250_000_000) == 1 << 16)
        #expect(RTPHeaderExtensionElement.absSendTime(nanoseconds: 63_999_999_999) == 0xFF_FFFF)
        #expect(RTPHeaderExtensionElement.absSendTime(nanoseconds: UInt64.max) <= 0xFF_FFFF)
    }

    @Test("fields are rewritten in place and restored without touching the payload")
    func inPlaceRewrite() throws {
        let original = RTPPacket(
            header: RTPHeader(marker: true, payloadType: 96, sequenceNumber: 65535, timestamp: 0xFFFF_FFF0, ssrc: 1,
                              headerExtension: .oneByte([.audioLevel(id: 1, voiceActivity: true, level: 10),
                                                         .absSendTime(id: 2, 5), .transportSequenceNumber(id: 3, 100),
                                                         .mid(id: 4, "a1")])),
            payload: [1, 2, 3])
        var bytes = try original.serialize()
        let view = try RTPView.parse(bytes)
        bytes.withUnsafeMutableBytes { b in
            RTPView.setSSRC(0xCAFE_BABE, in: b)
            RTPView.setSequenceNumber(0, in: b)
            RTPView.setTimestamp(0x10, in: b)
            RTPView.setPayloadType(100, in: b)
            #expect(view.setAudioLevel(id: 1, voiceActivity: false, level: 127, in: b))
            #expect(view.setAbsSendTime(id: 2, 0x12_3456, in: b))
            #expect(view.setTransportSequenceNumber(id: 3, 4242, in: b))
            #expect(view.setMid(id: 4, "b2", in: b))
            #expect(!view.setMid(id: 4, "longer", in: b))
            #expect(!view.setAudioLevel(id: 9, voiceActivity: true, level: 0, in: b))
        }
        let rewritten = try RTPPacket.parse(bytes)
        #expect(rewritten.header.ssrc == 0xCAFE_BABE && rewritten.header.sequenceNumber == 0)
        #expect(rewritten.header.timestamp == 0x10 && rewritten.header.payloadType == 100 && rewritten.header.marker)
        #expect(rewritten.payload == [1, 2, 3])
        bytes.withUnsafeBytes { b in
            #expect(view.audioLevel(id: 1, in: b)! == (false, 127))
            #expect(view.absSendTime(id: 2, in: b) == 0x12_3456)
            #expect(view.transportSequenceNumber(id: 3, in: b) == 4242)
            #expect(view.midEquals(id: 4, "b2", in: b) && !view.midEquals(id: 4, "b", in: b))
            #expect(view.mid(id: 4, in: b) == "b2")
        }
        bytes.withUnsafeMutableBytes { b in
            RTPView.setMarker(false, in: b)
            RTPView.setPayloadType(96, in: b)
        }
        #expect(bytes[1] == 96)
        #expect(bytes.withUnsafeBytes { RTPView.markerAndPayloadType(in: $0) } == (false, 96))
    }

    @Test("two-byte elements are found in place, padding bytes skipped")
    func twoByteInPlace() throws {
        let bytes = hexBytes("90 60 0001 00000000 00000000 1000 0002 00 05 02 0102 00 07 00 00")
        let view = try RTPView.parse(bytes)
        #expect(view.hasTwoByteExtensions)
        bytes.withUnsafeBytes { b in
            #expect(view.transportSequenceNumber(id: 5, in: b) == 0x0102)
            #expect(view.extensionElement(id: 7, in: b) == 24..<24)
        }
    }
}

@Suite("RTP sequence arithmetic")
struct SequenceNumberTests {
    @Test("newer-than is wrap-aware", arguments: [
        (UInt16(1), UInt16(0), true), (0, 65535, true), (65535, 0, false), (32767, 0, true), (32768, 0, true),
        (0, 32768, false), (100, 100, false), (40000, 10, false), (10, 40000, true),
    ])
    func newer(a: UInt16, b: UInt16, expected: Bool) {
        #expect(SequenceNumber(a).isNewer(than: SequenceNumber(b)) == expected)
    }

    @Test("distance steps across the wrap")
    func distance() {
        #expect(SequenceNumber(65535).distance(to: SequenceNumber(0)) == 1)
        #expect(SequenceNumber(0).distance(to: SequenceNumber(65535)) == -1)
        #expect(SequenceNumber(65530) + 10 == SequenceNumber(4))
        #expect(SequenceNumber(4) - 10 == SequenceNumber(65530))
    }

    @Test("unwrapping counts cycles forwards and handles reordering across the wrap")
    func unwrap() {
        var unwrapper = SequenceNumberUnwrapper()
        let input: [UInt16] = [65534, 65535, 0, 65533, 1, 32768, 65535, 0, 32767, 32768]
        let expected: [Int64] = [65534, 65535, 65536, 65533, 65537, 98304, 131071, 131072, 163839, 163840]
        #expect(input.map { unwrapper.unwrap($0) } == expected)
        var backwards = SequenceNumberUnwrapper()
        #expect(backwards.unwrap(5) == 5)
        #expect(backwards.unwrap(65530) == -6)
    }

    @Test("timestamps unwrap across 2^32")
    func timestamps() {
        var unwrapper = RTPTimestampUnwrapper()
        #expect(unwrapper.unwrap(0xFFFF_FF00) == 0xFFFF_FF00)
        #expect(unwrapper.unwrap(0x0000_0100) == 0x1_0000_0100)
        #expect(unwrapper.peek(0xFFFF_FFFF) == 0xFFFF_FFFF)
        #expect(unwrapper.unwrap(0x8000_0100) == 0x1_8000_0100)
        #expect(RTPTimestamp(0).isNewer(than: RTPTimestamp(0xFFFF_FFFF)))
        #expect(RTPTimestamp(0x8000_0000).isNewer(than: RTPTimestamp(0)))
        #expect(!RTPTimestamp(0).isNewer(than: RTPTimestamp(0x8000_0000)))
        #expect(RTPTimestamp(0xFFFF_FFF0) + 0x20 == RTPTimestamp(0x10))
    }
}
