import Foundation

/// The Janus VideoRoom plugin's requests a load run needs: create a room, join as a publisher with
/// an offer, join as a subscriber to feeds (Janus offers) and start with the answer.
public struct JanusVideoRoom: Sendable {
    public static let plugin = "janus.plugin.videoroom"
    /// A publisher's feed id in its room.
    public struct Feed: Sendable, Hashable {
        public let id: UInt64
    }

    public let session: JanusSession

    public init(session: JanusSession) {
        self.session = session
    }

    /// Creates a temporary room for `publishers` publishers, Opus and VP8 only, with no bitrate cap and
    /// no periodic key-frame requests, so Janus forwards what it gets as an SFU.
    public func createRoom(_ room: UInt64, publishers: Int) async throws {
        let handle = try await session.attach(Self.plugin)
        let reply = try await session.message(handle, [
            "request": "create", "room": room, "publishers": max(1, publishers), "bitrate": 0, "fir_freq": 0,
            "audiocodec": "opus", "videocodec": "vp8", "notify_joining": false, "permanent": false,
        ])
        guard reply.data["videoroom"] as? String == "created" else { throw JanusError("create room \(room): \(reply.data)") }
    }

    /// Joins `room` as a publisher and publishes the offer in one request; returns the answer and the feed.
    public func publish(_ handle: JanusSession.Handle, room: UInt64, offer: String) async throws -> (answer: String, feed: Feed) {
        let reply = try await session.message(
            handle, ["request": "joinandconfigure", "room": room, "ptype": "publisher", "display": "load"], jsep: ("offer", offer))
        guard reply.data["videoroom"] as? String == "joined", let id = (reply.data["id"] as? NSNumber)?.uint64Value,
              let answer = reply.sdp else {
            throw JanusError("publish in room \(room): \(reply.data)")
        }
        return (answer, Feed(id: id))
    }

    /// Joins `room` as a subscriber to every stream of `feeds` on one peer connection; returns Janus's offer.
    public func subscribe(_ handle: JanusSession.Handle, room: UInt64, feeds: [Feed]) async throws -> String {
        let streams: [[String: UInt64]] = feeds.map { ["feed": $0.id] }
        let reply = try await session.message(handle, ["request": "join", "room": room, "ptype": "subscriber", "streams": streams])
        guard reply.data["videoroom"] as? String == "attached", let offer = reply.sdp else {
            throw JanusError("subscribe in room \(room): \(reply.data)")
        }
        return offer
    }

    /// Answers a subscription's offer; Janus starts sending once the peer connection is up.
    public func start(_ handle: JanusSession.Handle, room: UInt64, answer: String) async throws {
        let reply = try await session.message(handle, ["request": "start", "room": room], jsep: ("answer", answer))
        guard reply.data["started"] != nil || reply.data["videoroom"] as? String == "event" else {
            throw JanusError("start in room \(room): \(reply.data)")
        }
    }
}
