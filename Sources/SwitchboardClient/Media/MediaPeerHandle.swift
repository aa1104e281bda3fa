import Audio
import Crypto
import Foundation
import Media
import MediaLoad
import Runtime
import Wire

/// A `MediaPeer` seen from any thread: every call hops to the media loop.
extension SessionError {
    /// A media connection could not be set up (SDP, socket, codec).
    static func media(_ detail: String) -> SessionError { .server(code: "mediaFailed", detail: detail) }
}

final class MediaPeerHandle: Sendable {
    /// Invariant: `peer` is touched only by jobs running on `ClientLoops.media`.
    private struct Box: @unchecked Sendable { let peer: MediaPeer }
    private let box: Box
    private let loop: EventLoop

    static let certificate: DTLSCertificate? = try? DTLSCertificate()

    /// `address`: the local address its socket is bound to, or nil for every address; `relay`: the TURN server of its
    /// relayed candidate (all its media through it when relay-only), or nil.
    init(address: String? = nil, relay: MediaRelay? = nil) async throws(SessionError) {
        guard let certificate = Self.certificate else { throw .media("no DTLS certificate") }
        let loop = ClientLoops.media
        do {
            box = try await loop.submit {
                let peer = try MediaPeer(certificate: certificate, loop: loop, address: address, relay: relay)
                peer.start()
                return Box(peer: peer)
            }
        } catch {
            throw .media("cannot open a UDP socket: \(error)")
        }
        self.loop = loop
        relayOnly = relay?.only ?? false
    }

    private let relayOnly: Bool

    private func on<T: Sendable>(_ body: @escaping @Sendable (MediaPeer) throws -> T) async throws(SessionError) -> T {
        let box = self.box
        do {
            return try await loop.submit { try body(box.peer) }
        } catch let e as SessionError {
            throw e
        } catch {
            throw .media(String(describing: error))
        }
    }

    /// The relayed candidate's allocation state once the TURN server has answered (nil without one), waiting up to 10 s.
    private func settledRelayState() async throws(SessionError) -> TURNAllocation.State? {
        for _ in 0..<500 {
            let state = try await on { $0.transport.relayState }
            if state != .allocating { return state }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return .allocating
    }

    /// Relay-only: waits for the TURN allocation (the one candidate to offer).
    private func waitForRelay() async throws(SessionError) {
        guard relayOnly else { return }
        switch try await settledRelayState() {
        case nil, .allocated: return
        case .failed(let why): throw .media("TURN: \(why)")
        case .allocating: throw .media("TURN: no allocation within 10 s")
        }
    }

    /// Beside host candidates: the relayed candidate (`candidate:…`) once the TURN server has allocated it, to trickle
    /// after the offer or answer; nil when there is none to send (no TURN server, relay-only, a failed allocation, or
    /// none within 10 s).
    func trickledRelayCandidate() async -> String? {
        guard !relayOnly, case .allocated = try? await settledRelayState() else { return nil }
        return (try? await on { $0.transport.relayedCandidate() }).map { "candidate:" + $0 }
    }

    /// A send-only offer for Opus from `audio` and VP8 from `video` (its sizes as simulcast layers when it has several).
    /// `peerToPeer`: for another client (a relayed session), with this side's host candidates (relay-only: its relayed
    /// one; beside host ones, the relayed one is trickled after: `trickledRelayCandidate`) and the largest size only.
    func publishOffer(audio: AudioSource?, video: IVFFileSource?, peerToPeer: Bool = false) async throws(SessionError) -> String {
        let codec: OpusCodec?
        do { codec = try audio.map { _ in try OpusCodec() } } catch { throw .media("Opus: \(error)") }
        struct Parts: @unchecked Sendable {
            // Invariant: handed to the media thread once and used only there.
            let audio: AudioSource?
            let codec: OpusCodec?
        }
        let parts = Parts(audio: audio, codec: codec)
        if peerToPeer { try await waitForRelay() }
        let layers = peerToPeer ? Array((video?.layers ?? []).suffix(1)) : video?.layers ?? []
        let rids = peerToPeer ? [] : video?.rids ?? []
        return try await on { peer in
            var streams: [ClientSDP.OutgoingStream] = []
            if let source = parts.audio, let codec = parts.codec {
                let ssrc = UInt32.random(in: 1...UInt32.max)
                peer.audioOut = MediaPeer.AudioOut(source: source, codec: codec, ssrc: ssrc, levelID: 1)
                streams.append(.init(kind: .audio, ssrc: ssrc, codec: .opus))
            }
            if !layers.isEmpty {
                peer.videoOut = layers.enumerated().map { i, capture in
                    MediaPeer.VideoOut(capture: capture, ssrc: UInt32.random(in: 1...UInt32.max), rid: rids.isEmpty ? nil : rids[i])
                }
                streams.append(.init(kind: .video, ssrc: peer.videoOut[0].ssrc, codec: .vp8, rids: rids, ridExtensionID: MediaPeer.ridExtensionID))
            }
            return ClientSDP.offer(ice: peer.transport.local, certificate: peer.transport.certificate, sessionID: UInt64.random(in: 1...(1 << 62)),
                                   streams: streams, audioLevelID: 1, cname: "switchboard-client",
                                   candidates: peerToPeer ? peer.transport.offerCandidates() : [])
        }
    }

    /// Applies the server's answer to a publish offer and starts connecting; `peerToPeer`, another client's (this
    /// side offered, so it is ICE's controlling agent; the candidates may trickle in after).
    func applyAnswer(_ sdp: String, peerToPeer: Bool = false) async throws(SessionError) {
        let remote: ClientSDP.PeerRemote
        do { remote = try peerToPeer ? ClientSDP.peerRemote(sdp) : ClientSDP.serverAsPeer(sdp) } catch { throw .media("answer: \(error)") }
        try await on { peer in
            try peer.transport.configure(remote: remote.ice, candidates: remote.candidates, fingerprint: remote.fingerprint,
                                         dtlsRole: remote.localDTLSRole, controlling: true)
        }
    }

    /// A candidate the other client trickled (`a=candidate` value, with or without `candidate:`); one this side
    /// cannot check (an mDNS name, TCP, the end of gathering) is ignored.
    func addCandidate(_ text: String) async {
        guard let address = ClientSDP.candidateAddress(text) else { return }
        _ = try? await on { $0.transport.addCandidate(address) }
    }

    /// Answers a server offer for receiving; `owners` maps each m-line's mid to whom it carries.
    /// The first offer configures the transport; later ones (renegotiation) only update the streams.
    /// `peerToPeer`: another client's offer (a relayed session): this side answers as ICE's controlled agent, with
    /// its candidates as `publishOffer` gives them.
    func answer(offer text: String, owners: [String: String], sink: AudioSink?, videoSink: VideoFrameCounter?,
                peerToPeer: Bool = false) async throws(SessionError) -> String {
        let offer: SessionDescription
        let remote: ClientSDP.PeerRemote
        do {
            offer = try SessionDescription.parse(text)
            remote = try peerToPeer ? ClientSDP.peerRemote(text) : ClientSDP.serverAsPeer(text)
        } catch {
            throw .media("offer: \(error)")
        }
        var streams: [(ssrc: UInt32, member: String, video: Bool, vp8: UInt8?)] = []
        for m in offer.media where m.direction != .inactive {
            let primary = m.ssrcGroups.first { $0.semantics == "FID" }?.ssrcs.first ?? m.ssrcs.first
            guard let ssrc = primary else { continue }
            let vp8 = m.kind == "video" ? m.rtpMaps.first { $0.encodingName.uppercased() == "VP8" }?.payloadType : nil
            streams.append((ssrc, m.mid.flatMap { owners[$0] } ?? m.mid ?? "", m.kind == "video", vp8))
        }
        var decoders: [UInt32: OpusCodec] = [:]
        for s in streams where !s.video { decoders[s.ssrc] = try? OpusCodec() }
        struct Parts: @unchecked Sendable {
            // Invariant: handed to the media thread once and used only there.
            let decoders: [UInt32: OpusCodec]
        }
        let parts = Parts(decoders: decoders)
        let list = streams
        if peerToPeer { try await waitForRelay() }
        return try await on { peer in
            if !peer.transport.isConfigured {
                try peer.transport.configure(remote: remote.ice, candidates: remote.candidates, fingerprint: remote.fingerprint,
                                             dtlsRole: remote.localDTLSRole, controlling: !peerToPeer)
            }
            if let sink { peer.sink = sink }
            if let videoSink { peer.videoSink = videoSink }
            peer.incoming = list.map { s in
                if let known = peer.incoming.first(where: { $0.ssrc == s.ssrc }) {
                    var k = known
                    k.member = s.member
                    k.vp8PayloadType = s.vp8
                    return k
                }
                let decoder = parts.decoders[s.ssrc]
                return MediaPeer.Incoming(ssrc: s.ssrc, member: s.member, video: s.video, vp8PayloadType: s.vp8, decoder: decoder,
                                          jitter: decoder == nil ? nil : JitterBuffer())
            }
            return ClientSDP.answer(to: offer, ice: peer.transport.local, certificate: peer.transport.certificate, remoteSetup: remote.setup,
                                    keepInactive: true, candidates: peerToPeer ? peer.transport.offerCandidates() : [])
        }
    }

    func setMuted(_ muted: Bool) async {
        _ = try? await on { $0.muted = muted }
    }

    /// Stops sending the video, or sends it again (from a key frame).
    func setVideoPaused(_ paused: Bool) async {
        _ = try? await on { $0.setVideoPaused(paused) }
    }

    /// Pauses the simulcast layers no subscriber takes, sends the others.
    func setUnusedLayers(_ rids: Set<String>) async {
        _ = try? await on { $0.setUnusedLayers(rids) }
    }

    /// Connected (ICE, DTLS and SRTP ready), packets sent and received so far.
    func statistics() async -> MediaStatistics {
        (try? await on { MediaStatistics(connected: $0.transport.connected, packetsSent: $0.packetsSent, packetsReceived: $0.packetsReceived,
                                         layerPacketsSent: $0.layerPackets, throughTURN: $0.transport.selectedViaRelay) })
            ?? MediaStatistics(connected: false, packetsSent: 0, packetsReceived: 0)
    }

    func close() {
        let box = self.box
        loop.execute { box.peer.close() }
    }

    /// Waits until the media loop has run every job given it so far: the connections closed before have sent what
    /// closing sends (a TURN allocation's release) when this returns.
    static func settle() async {
        _ = try? await ClientLoops.media.submit {}
    }
}

/// A media connection's counters.
public struct MediaStatistics: Sendable, Hashable {
    public var connected: Bool
    public var packetsSent: Int
    public var packetsReceived: Int
    /// A simulcast publisher's video packets sent of each size, by RID (a size no one takes stops rising).
    public var layerPacketsSent: [String: Int] = [:]
    /// Whether the connection's media goes through a TURN server (its relayed candidate's pair answered first).
    public var throughTURN = false
}
