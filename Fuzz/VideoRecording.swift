// VideoRecording (RTPReorderBuffer → VP8FrameAssembler and H264FrameAssembler → WebMWriter): any packets, in
// any order, with any payloads, keep the reorder buffer bounded and in order, frames within their bound (an H.264
// unit in Annex B, a key frame holding an IDR slice), and the writer's patches inside what it wrote.

/// One fuzz input: records of (sequence delta, time step, flags, payload length) then the payload bytes.
func fuzzVideoRecording(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    guard size >= 2 else { return 0 }
    var order = RTPReorderBuffer<(timestamp: UInt32, marker: Bool, payload: [UInt8])>(capacity: 4 + Int(bytes[0] % 60),
                                                                                        maxWait: UInt64(bytes[1]) * 1_000_000)
    var assembler = VP8FrameAssembler(maxFrameBytes: 4_096)
    var h264 = H264FrameAssembler(maxFrameBytes: 4_096)
    var writer = WebMWriter(video: (320, 240), audio: (48_000, 2), muxingApp: "fuzz")
    var written = writer.header().count
    var sequence: UInt16 = 0
    var timestamp: UInt32 = 0
    var now: UInt64 = 1_000_000_000
    var released: UInt16?
    var i = 2
    func write(_ out: (sequence: UInt16, element: (timestamp: UInt32, marker: Bool, payload: [UInt8]), gapBefore: Bool)) {
        if let last = released { precondition(Int16(bitPattern: out.sequence &- last) > 0, "released out of order") }
        released = out.sequence
        let frame = out.element.payload.withUnsafeBytes {
            assembler.push(timestamp: out.element.timestamp, marker: out.element.marker, gapBefore: out.gapBefore, payload: $0)
        }
        let unit = out.element.payload.withUnsafeBytes {
            h264.push(timestamp: out.element.timestamp, marker: out.element.marker, gapBefore: out.gapBefore, payload: $0)
        }
        if let unit {
            precondition(unit.bytes.count <= 4_096 && unit.bytes.starts(with: H264FrameAssembler.startCode), "H.264 unit beyond its bound or not Annex B")
            precondition(!unit.keyframe || unit.bytes.indices.dropLast(4).contains { unit.bytes[$0..<$0 + 4].elementsEqual(H264FrameAssembler.startCode) && unit.bytes[$0 + 4] & 0x1F == 5 },
                         "an H.264 key frame without an IDR slice")
        }
        guard let frame else { return }
        precondition(frame.bytes.count <= 4_096, "frame beyond its bound")
        written += writer.frame(frame.bytes, track: .video, time: Int64(frame.timestamp / 90), keyframe: frame.keyframe).count
        written += writer.frame([0xFC], track: .audio, time: Int64(frame.timestamp / 90), keyframe: true).count
    }
    while i + 4 <= size {
        sequence &+= UInt16(bytes[i]) &- 8
        now &+= UInt64(bytes[i + 1]) * 1_000_000
        let flags = bytes[i + 2]
        if flags & 0x01 != 0 { timestamp &+= 3_000 }
        let length = min(Int(bytes[i + 3]), size - (i + 4))
        let payload = Array(bytes[(i + 4)..<(i + 4 + length)])
        _ = order.insert(sequence: sequence, arrival: now, (timestamp, flags & 0x02 != 0, payload))
        precondition(order.count <= order.capacity, "reorder buffer beyond its capacity")
        while let out = order.pop(now: now) { write(out) }
        i += 4 + length
    }
    for out in order.flush() { write(out) }
    for patch in writer.finish() {
        precondition(patch.offset >= 0 && patch.offset + patch.bytes.count <= written, "patch outside the file")
    }
    return 0
}
