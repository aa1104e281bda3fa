import CShims

/// Per-peer questions a signalling adapter and the join-time benchmark ask of the generator.
extension LoadGenerator {
    /// The peer's one host candidate (RFC 8839 `candidate` attribute value without `a=`), for servers
    /// that expect the client's candidates by trickle rather than learning them from its checks.
    public func hostCandidate(_ peer: Peer) async throws -> String {
        let host = bindHost
        let port = try await on(peer.loop) { state, _ in state.peers[peer.index].socket.localPort }
        return "candidate:1 1 udp 2130706431 \(host) \(port) typ host"
    }

    /// Whether the peer has finished ICE and DTLS.
    public func isConnected(_ peer: Peer) async -> Bool {
        (try? await on(peer.loop) { state, _ in state.peers[peer.index].connected }) ?? false
    }

    /// When the peer received its first RTP packet (`sb_monotonic_ns` clock), or nil.
    public func firstMediaAt(_ peer: Peer) async -> UInt64? {
        let at = (try? await on(peer.loop) { state, _ in state.peers[peer.index].firstMediaAt }) ?? 0
        return at == 0 ? nil : at
    }

    /// Where a peer that is not connected stands, or its failure.
    public func describe(_ peer: Peer) async -> String {
        (try? await on(peer.loop) { state, _ in
            let p = state.peers[peer.index]
            return p.failure ?? p.progress
        }) ?? "?"
    }

    /// The generator's clock (monotonic ns), the one `firstMediaAt` uses.
    public static func now() -> UInt64 { sb_monotonic_ns() }
}
