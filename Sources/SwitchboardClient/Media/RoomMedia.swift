import Foundation
import MediaLoad
import Synchronization
import Wire

/// Audio in a conversation through the `rtc:*` flow (docs/protocol.md, "Media (rtc:*)"): one
/// connection publishes the source's audio, one receives every other member's, renegotiated as
/// members come and go. `Session.enableMedia(in:source:sink:)` makes one. When the session's socket
/// drops the server frees both connections; once the session is back (resumed or logged in anew)
/// this joins again and publishes and subscribes anew with the same source and sink, reporting each
/// step on `states()`.
public final class RoomMedia: Sendable {
    public let conversationID: String
    let session: Session
    let source: AudioSource?
    let sink: AudioSink?
    private struct Peers {
        var memberID: String
        var publisher: MediaPeerHandle?
        var subscriber: MediaPeerHandle?
        var tracks: [Track] = []
        var restarts = 0
    }
    private let peers: Mutex<Peers>
    /// What the one negotiating task works through, in arrival order.
    private enum Input: Sendable {
        case offer(JSONValue)
        case state(ConnectionState)
    }
    private let inputs: AsyncStream<Input>.Continuation
    private let inputStream: Mutex<AsyncStream<Input>?>
    private let tasks = Mutex<[Task<Void, Never>]>([])
    private let stateStreams = Mutex<[Int: AsyncStream<MediaConnectionState>.Continuation]>([:])
    private let nextStream = Atomic<Int>(0)
    private let ended = Atomic<Bool>(false)

    /// Who an m-line of the receiving connection carries.
    public struct Track: Sendable, Hashable {
        public var mid: String
        public var memberID: String
        public var name: String?
    }

    init(session: Session, conversationID: String, memberID: String, source: AudioSource?, sink: AudioSink?) {
        self.session = session
        self.conversationID = conversationID
        self.source = source
        self.sink = sink
        peers = Mutex(Peers(memberID: memberID))
        let (stream, continuation) = AsyncStream<Input>.makeStream(bufferingPolicy: .unbounded)
        inputs = continuation
        inputStream = Mutex(stream)
    }

    /// The session user's member id in the conversation.
    public var memberID: String { peers.withLock { $0.memberID } }

    /// The members whose audio the receiving connection carries now.
    public var tracks: [Track] { peers.withLock { $0.tracks } }

    /// Media restarts after a reconnect, each as it happens.
    public func states() -> AsyncStream<MediaConnectionState> {
        let (stream, continuation) = AsyncStream<MediaConnectionState>.makeStream(bufferingPolicy: .unbounded)
        let id = nextStream.wrappingAdd(1, ordering: .relaxed).oldValue
        if ended.load(ordering: .relaxed) {
            continuation.yield(.disconnected(.closed))
            continuation.finish()
            return stream
        }
        stateStreams.withLock { $0[id] = continuation }
        continuation.removeOnTermination { [weak self] in _ = self?.stateStreams.withLock { $0.removeValue(forKey: id) } }
        return stream
    }

    private func publish(_ state: MediaConnectionState) {
        stateStreams.withLock { for c in $0.values { c.yield(state) } }
    }

    static func tracks(_ json: JSONValue?) -> [Track] {
        (json?.arrayValue ?? []).compactMap { t in
            guard let mid = t["mid"]?.stringValue, let member = t["member_id"]?.stringValue else { return nil }
            return Track(mid: mid, memberID: member, name: t["name"]?.stringValue)
        }
    }

    /// Publishes the source (when there is one) and subscribes; the peers are this media's from then on.
    /// The TURN server of the connections' relayed candidates (the login's `ice_servers`); relay-only, one is needed.
    private func turnRelay() async throws(SessionError) -> MediaRelay? {
        let policy = session.options.iceTransportPolicy
        guard let relay = await session.iceServers.mediaRelay(policy) else {
            if policy == .all { return nil }
            throw .media("relay-only media needs a TURN server over UDP among the login's ICE servers (the server's --ice-servers)")
        }
        return relay
    }

    func connect() async throws(SessionError) {
        let cid = JSONValue.string(conversationID)
        let relay = try await turnRelay()
        if let source {
            let peer = try await MediaPeerHandle(relay: relay)
            peers.withLock { $0.publisher = peer }
            let offer = try await peer.publishOffer(audio: source, video: nil)
            let reply = try await session.request("rtc:publish", ["conversation_id": cid, "offer": .string(offer)])
            guard let answer = reply["answer"]?.stringValue else { throw SessionError.media("rtc:publish gave no answer") }
            try await peer.applyAnswer(answer)
        }
        let subscriber = try await MediaPeerHandle(relay: relay)
        peers.withLock { $0.subscriber = subscriber }
        let reply = try await session.request("rtc:subscribe", ["conversation_id": cid])
        if let offer = reply["offer"]?.stringValue {
            try await negotiate(offer: offer, tracks: Self.tracks(reply["tracks"]))
        }
    }

    /// Answers a subscribe offer and sends the answer.
    func negotiate(offer: String, tracks: [Track]) async throws(SessionError) {
        guard let subscriber = peers.withLock({ p -> MediaPeerHandle? in
            p.tracks = tracks
            return p.subscriber
        }) else { return }
        let owners = Dictionary(tracks.map { ($0.mid, $0.memberID) }, uniquingKeysWith: { a, _ in a })
        let answer = try await subscriber.answer(offer: offer, owners: owners, sink: sink, videoSink: nil)
        try await session.request("rtc:answer", ["conversation_id": .string(conversationID), "answer": .string(answer)])
    }

    /// Starts the one task that answers renegotiations and restarts media after a reconnect, in order.
    func follow(_ offers: AsyncStream<JSONValue>, states: AsyncStream<ConnectionState>) {
        let conversation = conversationID
        let feed = inputs
        let feeders = [
            Task {
                for await message in offers {
                    let body = message["body"] ?? .null
                    if body["conversation_id"]?.stringValue == conversation { feed.yield(.offer(message)) }
                }
            },
            Task {
                for await state in states { feed.yield(.state(state)) }
                feed.finish()
            },
        ]
        guard let stream = inputStream.withLock({ s in defer { s = nil }; return s }) else { return }
        let worker = Task { [weak self] in
            var dropped = false
            for await input in stream {
                guard let self, !self.ended.load(ordering: .relaxed) else { return }
                switch input {
                case .offer(let message):
                    guard !dropped else { continue }  // for the freed connection; a new subscribe follows
                    let body = message["body"] ?? .null
                    guard let offer = body["offer"]?.stringValue else { continue }
                    try? await self.negotiate(offer: offer, tracks: Self.tracks(body["tracks"]))
                case .state(.reconnecting):
                    if !dropped { self.publish(.reconnecting) }
                    dropped = true
                case .state(.connected):
                    guard dropped else { continue }
                    dropped = false
                    await self.restart()
                case .state(.disconnected(let why)):
                    self.end(why)
                    return
                }
            }
        }
        tasks.withLock { $0 = feeders + [worker] }
    }

    /// The session is back: the server freed this member's media with the old socket. Joins again
    /// (a no-op when still joined) and publishes and subscribes anew; a refusal ends the media.
    private func restart() async {
        let old = peers.withLock { p -> [MediaPeerHandle] in
            defer { p.publisher = nil; p.subscriber = nil; p.tracks = [] }
            return [p.publisher, p.subscriber].compactMap { $0 }
        }
        for peer in old { peer.close() }
        do throws(SessionError) {
            let joined = try await session.request("rtc:join", ["conversation_id": .string(conversationID)])
            let restarts = peers.withLock { p -> Int in
                if let id = joined["member_id"]?.stringValue { p.memberID = id }
                p.restarts += 1
                return p.restarts
            }
            try await connect()
            publish(.reconnected(attempt: restarts))
        } catch .transportClosed, .closed {
            // Lost again meanwhile: the next `.connected` restarts it again.
        } catch {
            end(error)
        }
    }

    /// Stops (or restarts) sending the microphone (`rtc:mute`); the server posts `audio:mute:on/off`.
    public func setMuted(_ muted: Bool) async throws(SessionError) {
        try await session.conversations.setMuted(muted, in: conversationID)
        await peers.withLock { $0.publisher }?.setMuted(muted)
    }

    /// Stops (or restarts) everything this member hears (`rtc:earmuff`).
    public func setEarmuffed(_ earmuffed: Bool) async throws(SessionError) {
        try await session.conversations.setEarmuffed(earmuffed, in: conversationID)
    }

    /// Counters of the sending and the receiving connection (the current ones, after a restart).
    public func statistics() async -> (sending: MediaStatistics?, receiving: MediaStatistics) {
        let (publisher, subscriber) = peers.withLock { ($0.publisher, $0.subscriber) }
        let idle = MediaStatistics(connected: false, packetsSent: 0, packetsReceived: 0)
        return (await publisher?.statistics(), await subscriber?.statistics() ?? idle)
    }

    /// Closes both connections and ends `states()` with `why`.
    private func end(_ why: SessionError) {
        guard !ended.exchange(true, ordering: .relaxed) else { return }
        for t in tasks.withLock({ $0 }) { t.cancel() }
        inputs.finish()
        let old = peers.withLock { p -> [MediaPeerHandle] in
            defer { p.publisher = nil; p.subscriber = nil }
            return [p.publisher, p.subscriber].compactMap { $0 }
        }
        for peer in old { peer.close() }
        let streams = stateStreams.withLock { s in
            defer { s = [:] }
            return Array(s.values)
        }
        for c in streams {
            c.yield(.disconnected(why))
            c.finish()
        }
    }

    /// Media off (`rtc:unpublish`): both connections close; the member stays in the conversation.
    public func disable() async {
        guard !ended.load(ordering: .relaxed) else { return }
        _ = try? await session.request("rtc:unpublish", ["conversation_id": .string(conversationID)])
        end(.closed)
        await MediaPeerHandle.settle()
    }
}

extension Session {
    /// Joins the conversation (`rtc:join`) and turns media on: publishes `source` (nil: listen
    /// only) and plays every other member's audio into `sink`.
    public func enableMedia(in conversationID: String, source: AudioSource? = nil, sink: AudioSink? = nil) async throws(SessionError) -> RoomMedia {
        let joined = try await request("rtc:join", ["conversation_id": .string(conversationID)])
        let media = RoomMedia(session: self, conversationID: conversationID, memberID: joined["member_id"]?.stringValue ?? "",
                              source: source, sink: sink)
        // Listen for renegotiations and reconnects before subscribing, so none slips between the two.
        let offers = pushes(prefix: "rtc:offer")
        let states = states()
        do throws(SessionError) {
            try await media.connect()
        } catch {
            await media.disable()
            throw error
        }
        media.follow(offers, states: states)
        return media
    }
}
