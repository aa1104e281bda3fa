import Wire

/// Signaling only: for a program that runs its own media stack (`switchboard load` runs thousands
/// of light peers in one process) and needs the session's offers and answers, not its peers.
extension VideoSession {
    /// Publishes a stream whose media comes from `offer`, made elsewhere; returns the stream and
    /// the server's answer to apply.
    public func publish(name: String, offer: String, hasAudio: Bool = true, hasVideo: Bool = true,
                        publishCaptions: Bool = false) async throws(SessionError) -> (stream: VideoStream, answer: String) {
        try requireRouted()
        let reply = try await request("video:publish", [
            "name": .string(name), "hasAudio": .bool(hasAudio), "hasVideo": .bool(hasVideo), "videoType": "camera", "offer": .string(offer),
            "publishCaptions": .bool(publishCaptions),
        ])
        guard let answer = reply["answer"]?.stringValue,
              let stream = VideoStream(json: reply["stream"]) ?? VideoStream(json: ["streamId": reply["streamId"] ?? .null]) else {
            throw SessionError.media("video:publish gave no answer")
        }
        return (stream, answer)
    }

    /// Subscribes to a stream with a media stack of the caller's: `answer` turns the server's
    /// offer into the answer sent back.
    public func subscribe(_ streamID: String, answer: (String) async throws -> String) async throws(SessionError) {
        try requireRouted()
        let reply = try await request("video:subscribe", ["streamId": .string(streamID)])
        guard let offer = reply["offer"]?.stringValue else { throw SessionError.media("video:subscribe gave no offer") }
        let text: String
        do { text = try await answer(offer) } catch let e as SessionError { throw e } catch { throw SessionError.media("answer to the subscribe offer: \(error)") }
        try await request("video:subscribe:answer", ["streamId": .string(streamID), "answer": .string(text)])
    }

    private func requireRouted() throws(SessionError) {
        guard !relayed else {
            throw SessionError.server(code: "relayedSession",
                                      detail: "The session is relayed (peer to peer); this client sends and receives media through the server only.")
        }
    }
}
