import Foundation

/// The Janus AudioBridge plugin's requests a load run needs: create a mixing room, and join it with
/// an offer (speaking, or muted as a listener). The plugin answers the participant's offer and sends
/// each participant its own mix (everyone else's audio) on that one peer connection.
public struct JanusAudioBridge: Sendable {
    public static let plugin = "janus.plugin.audiobridge"

    public let session: JanusSession

    public init(session: JanusSession) {
        self.session = session
    }

    /// Creates a temporary room mixing at `samplingRate` Hz, not recorded, with no talking events, so
    /// the plugin's work is decoding, mixing and encoding.
    public func createRoom(_ room: UInt64, samplingRate: Int = 48_000) async throws {
        let handle = try await session.attach(Self.plugin)
        let reply = try await session.message(handle, [
            "request": "create", "room": room, "permanent": false, "sampling_rate": samplingRate, "record": false,
            "audiolevel_ext": true, "audiolevel_event": false,
        ])
        guard reply.data["audiobridge"] as? String == "created" else { throw JanusError("create room \(room): \(reply.data)") }
    }

    /// Joins `room` (muted: a listener whose audio, if any, is not mixed), then offers the participant's
    /// peer connection with `configure`; returns the plugin's answer.
    public func join(_ handle: JanusSession.Handle, room: UInt64, muted: Bool, offer: String) async throws -> String {
        let joined = try await session.message(handle, ["request": "join", "room": room, "display": "load", "muted": muted])
        guard joined.data["audiobridge"] as? String == "joined" else { throw JanusError("join room \(room): \(joined.data)") }
        if let answer = joined.sdp { return answer }
        let reply = try await session.message(handle, ["request": "configure", "muted": muted], jsep: ("offer", offer))
        guard let answer = reply.sdp else { throw JanusError("configure in room \(room): no answer (\(reply.data))") }
        return answer
    }
}
