import Foundation
import Synchronization
import Wire

/// Audio in a conversation through the `rtc:*` flow (docs/protocol.md, "Media (rtc:*)"): one
/// connection publishes the source's audio, one receives every other member's, renegotiated as
/// members come and go. `Session.enableMedia(in:source:sink:)` makes one.
public final class RoomMedia: Sendable {
    public let conversationID: String
    /// The session user's member id in the conversation.
    public let memberID: String
    let session: Session
    let publisher: MediaPeerHandle?
    let subscriber: MediaPeerHandle
    let sink: AudioSink?
    private let negotiator = Mutex<Task<Void, Never>?>(nil)
    private let trackList = Mutex<[Track]>([])
    private let ended = Atomic<Bool>(false)

    /// Who an m-line of the receiving connection carries.
    public struct Track: Sendable, Hashable {
        public var mid: String
        public var memberID: String
        public var name: String?
    }

    init(session: Session, conversationID: String, memberID: String, publisher: MediaPeerHandle?, subscriber: MediaPeerHandle, sink: AudioSink?) {
        self.session = session
        self.conversationID = conversationID
        self.memberID = memberID
        self.publisher = publisher
        self.subscriber = subscriber
        self.sink = sink
    }

    /// The members whose audio the receiving connection carries now.
    public var tracks: [Track] { trackList.withLock { $0 } }

    static func tracks(_ json: JSONValue?) -> [Track] {
        (json?.arrayValue ?? []).compactMap { t in
            guard let mid = t["mid"]?.stringValue, let member = t["member_id"]?.stringValue else { return nil }
            return Track(mid: mid, memberID: member, name: t["name"]?.stringValue)
        }
    }

    /// Answers a subscribe offer and sends the answer.
    func negotiate(offer: String, tracks: [Track]) async throws(SessionError) {
        trackList.withLock { $0 = tracks }
        let owners = Dictionary(tracks.map { ($0.mid, $0.memberID) }, uniquingKeysWith: { a, _ in a })
        let answer = try await subscriber.answer(offer: offer, owners: owners, sink: sink, videoSink: nil)
        try await session.request("rtc:answer", ["conversation_id": .string(conversationID), "answer": .string(answer)])
    }

    func follow(_ offers: AsyncStream<JSONValue>) {
        let conversation = conversationID
        let task = Task { [weak self] in
            for await message in offers {
                let body = message["body"] ?? .null
                guard body["conversation_id"]?.stringValue == conversation, let offer = body["offer"]?.stringValue else { continue }
                guard let self else { return }
                try? await self.negotiate(offer: offer, tracks: Self.tracks(body["tracks"]))
            }
        }
        negotiator.withLock { $0 = task }
    }

    /// Stops (or restarts) sending the microphone (`rtc:mute`); the server posts `audio:mute:on/off`.
    public func setMuted(_ muted: Bool) async throws(SessionError) {
        try await session.conversations.setMuted(muted, in: conversationID)
        await publisher?.setMuted(muted)
    }

    /// Stops (or restarts) everything this member hears (`rtc:earmuff`).
    public func setEarmuffed(_ earmuffed: Bool) async throws(SessionError) {
        try await session.conversations.setEarmuffed(earmuffed, in: conversationID)
    }

    /// Counters of the sending and the receiving connection.
    public func statistics() async -> (sending: MediaStatistics?, receiving: MediaStatistics) {
        (await publisher?.statistics(), await subscriber.statistics())
    }

    /// Media off (`rtc:unpublish`): both connections close; the member stays in the conversation.
    public func disable() async {
        guard !ended.exchange(true, ordering: .relaxed) else { return }
        negotiator.withLock { $0?.cancel() }
        _ = try? await session.request("rtc:unpublish", ["conversation_id": .string(conversationID)])
        publisher?.close()
        subscriber.close()
    }
}

extension Session {
    /// Joins the conversation (`rtc:join`) and turns media on: publishes `source` (nil: listen
    /// only) and plays every other member's audio into `sink`.
    public func enableMedia(in conversationID: String, source: AudioSource? = nil, sink: AudioSink? = nil) async throws(SessionError) -> RoomMedia {
        let cid = JSONValue.string(conversationID)
        let joined = try await request("rtc:join", ["conversation_id": cid])
        let memberID = joined["member_id"]?.stringValue ?? ""
        var publisher: MediaPeerHandle?
        if let source {
            let peer = try await MediaPeerHandle()
            publisher = peer
            do throws(SessionError) {
                let offer = try await peer.publishOffer(audio: source, video: nil)
                let reply = try await request("rtc:publish", ["conversation_id": cid, "offer": .string(offer)])
                guard let answer = reply["answer"]?.stringValue else { throw SessionError.media("rtc:publish gave no answer") }
                try await peer.applyAnswer(answer)
            } catch {
                peer.close()
                throw error
            }
        }
        let subscriber = try await MediaPeerHandle()
        let media = RoomMedia(session: self, conversationID: conversationID, memberID: memberID, publisher: publisher, subscriber: subscriber, sink: sink)
        // Listen for renegotiations before subscribing, so none slips between the two.
        let offers = pushes(prefix: "rtc:offer")
        do throws(SessionError) {
            let reply = try await request("rtc:subscribe", ["conversation_id": cid])
            if let offer = reply["offer"]?.stringValue {
                try await media.negotiate(offer: offer, tracks: RoomMedia.tracks(reply["tracks"]))
            }
        } catch {
            await media.disable()
            throw error
        }
        media.follow(offers)
        return media
    }
}
