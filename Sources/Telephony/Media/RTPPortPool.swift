import Synchronization

/// The RTP port range (`--rtp-ports`): hands out even ports (RTP) whose odd neighbour is RTCP.
public final class RTPPortPool: Sendable {
    public let range: ClosedRange<UInt16>
    private let state: Mutex<(used: Set<UInt16>, cursor: UInt16)>

    public init(range: ClosedRange<UInt16>) {
        let low = range.lowerBound % 2 == 0 ? range.lowerBound : range.lowerBound + 1
        self.range = low...max(low + 1, range.upperBound)
        state = Mutex(([], low))
    }

    /// Pairs in the range.
    public var capacity: Int { (Int(range.upperBound) - Int(range.lowerBound) + 1) / 2 }

    /// Tries even ports from the cursor on with `bind` (true when both RTP and RTCP bound); nil when
    /// every pair is taken or fails to bind.
    public func acquire(_ bind: (UInt16) -> Bool) -> UInt16? {
        for _ in 0..<capacity {
            let candidate: UInt16? = state.withLock { s in
                let port = s.cursor
                s.cursor = port + 2 > range.upperBound - 1 ? range.lowerBound : port + 2
                if s.used.contains(port) { return nil }
                s.used.insert(port)
                return port
            }
            guard let port = candidate else { continue }
            if bind(port) { return port }
            release(port)
        }
        return nil
    }

    public func release(_ port: UInt16) { _ = state.withLock { $0.used.remove(port) } }

    public var inUse: Int { state.withLock { $0.used.count } }
}
