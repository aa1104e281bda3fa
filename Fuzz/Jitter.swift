// Jitter (JitterBuffer): any sequence of arrivals and ticks keeps it bounded and consistent.

/// One fuzz input: 8-byte records of (op, sequence, timestamp delta, time step, payload length).
func fuzzJitter(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    guard size >= 1 else { return 0 }
    var config = JitterBuffer.Configuration()
    config.capacity = 4 + Int(bytes[0] % 60)
    config.maxPayload = 64
    config.clockRate = bytes[0] & 0x80 != 0 ? 8000 : 48_000
    var jb = JitterBuffer(config)
    var now: UInt64 = 1_000_000_000
    var timestamp: UInt32 = 0
    let payload = [UInt8](repeating: 0x5A, count: 100)
    var lastPlayed: UInt16?
    var restarts = 0
    var i = 1
    while i + 8 <= size {
        let op = bytes[i]
        let sequence = UInt16(bytes[i + 1]) << 8 | UInt16(bytes[i + 2])
        timestamp &+= UInt32(bytes[i + 3]) << 8 | UInt32(bytes[i + 4])
        now &+= UInt64(bytes[i + 5]) * 1_000_000
        let length = Int(bytes[i + 6]) % 100
        if op & 1 == 0 {
            let result = payload.withUnsafeBytes {
                jb.insert(sequence: sequence, timestamp: timestamp, payload: UnsafeRawBufferPointer(rebasing: $0[0..<length]), arrival: now)
            }
            precondition(length <= config.maxPayload || result == .tooLarge, "oversized payload accepted")
        } else {
            for _ in 0..<(1 + Int(bytes[i + 7] % 4)) {
                switch jb.pop(now: now) {
                case let .packet(sequence, _, payload):
                    precondition(payload.count <= config.maxPayload && payload.allSatisfy { $0 == 0x5A }, "payload corrupted")
                    if jb.statistics.restarts != restarts {
                        restarts = jb.statistics.restarts
                        lastPlayed = nil
                    }
                    if let last = lastPlayed {
                        precondition(Int16(bitPattern: sequence &- last) > 0, "played out of order")
                    }
                    lastPlayed = sequence
                case let .conceal(_, next):
                    precondition((next?.count ?? 0) <= config.maxPayload, "FEC payload too long")
                case .empty:
                    break
                }
                now &+= 20_000_000
            }
        }
        let s = jb.statistics
        precondition(s.targetDelayMilliseconds >= config.minimumDelayMilliseconds && s.targetDelayMilliseconds <= config.maximumDelayMilliseconds, "target out of range")
        precondition(s.bufferedMilliseconds <= config.capacity * config.frameMilliseconds, "buffered beyond capacity")
        precondition(s.played <= s.received, "played more than received")
        i += 8
    }
    return 0
}
