import Wire

/// Signaling only: for a program that runs its own media stack (`switchboard load` runs thousands
/// of light peers in one process) and needs the session's offers and answers, not its peers.
extension VideoSession {
    /// Publishes a stream whose media comes from `offer`, made elsewhere; returns the stream and
    /// the server's answer to apply.
    public func publish(name: String, offer: String, hasAudio: Bool = true, hasVideo: Bool = true,
                        publishCaptions: Bool = false, audioFallback: Bool = false) async throws(SessionError) -> (stream: VideoStream, answer: String) {
        try requireRouted()
        let reply = try await request("video:publish", [
            "name": .string(name), "hasAudio": .bool(hasAudio), "hasVideo": .bool(hasVideo), "videoType": "camera", "offer": .string(offer),
            "publishCaptions": .bool(publishCaptions), "audioFallback": ["publisher": .bool(audioFallback)],
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

    // MARK: Relayed sessions (peer to peer), for an app with a WebRTC stack of its own

    /// Publishes a stream in a relayed session: announced at once, no media through the server. Each subscriber
    /// then comes as `.relay(streamID:subscriberID:.subscribe)`: make a peer connection for it with the stream's
    /// tracks, and send its offer and candidates with `relay`.
    public func publishRelayed(name: String, hasAudio: Bool = true, hasVideo: Bool = true) async throws(SessionError) -> VideoStream {
        try requireRelayed()
        let reply = try await request("video:publish", ["name": .string(name), "hasAudio": .bool(hasAudio), "hasVideo": .bool(hasVideo), "videoType": "camera"])
        guard let stream = VideoStream(json: reply["stream"]) else { throw SessionError.media("video:publish gave no stream") }
        return stream
    }

    /// Subscribes to a stream in a relayed session; returns this client's subscriber id (its connection id). The
    /// publisher's offer comes as `.relay(…, .description)`: answer it, and pass candidates, with `relay`.
    public func subscribeRelayed(_ streamID: String) async throws(SessionError) -> String {
        try requireRelayed()
        let reply = try await request("video:subscribe", ["streamId": .string(streamID)])
        guard reply["relayed"]?.boolValue == true, let subscriber = reply["subscriberId"]?.stringValue else {
            throw SessionError.media("video:subscribe did not relay")
        }
        return subscriber
    }

    /// Passes a description or a candidate to the other end of a relayed subscription (`subscriberID` is the
    /// subscriber's connection: this client's own when it subscribed, the one `.relay(…, .subscribe)` named
    /// when it publishes).
    public func relay(streamID: String, subscriberID: String, _ message: VideoRelayMessage) async throws(SessionError) {
        var body: [String: JSONValue] = ["streamId": .string(streamID), "subscriberId": .string(subscriberID)]
        switch message {
        case .description(let type, let sdp): body["description"] = ["type": .string(type), "sdp": .string(sdp)]
        case .candidate(let c):
            var candidate: [String: JSONValue] = ["candidate": .string(c.candidate)]
            if let mid = c.sdpMid { candidate["sdpMid"] = .string(mid) }
            if let index = c.sdpMLineIndex { candidate["sdpMLineIndex"] = .number(Double(index)) }
            body["candidate"] = .object(candidate)
        case .subscribe, .end:
            throw SessionError.server(code: "invalidRelay", detail: "Only a description or a candidate is relayed.")
        }
        try await request("video:relay", body)
    }

    private func requireRelayed() throws(SessionError) {
        guard relayed else { throw SessionError.server(code: "notRelayed", detail: "The session is routed: publish and subscribe with an offer.") }
    }

    private func requireRouted() throws(SessionError) {
        guard !relayed else {
            throw SessionError.server(code: "relayedSession",
                                      detail: "The session is relayed (peer to peer): publish and subscribe without an offer (publish(name:audio:video:), publishRelayed).")
        }
    }
}
