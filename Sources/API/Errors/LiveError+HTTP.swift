import Live
import Media
import Platform
import Runtime

extension LiveError {
    /// The wire error of each refusal: the one place Live's errors (media ones included) become the
    /// codes clients see, on the realtime gateway and over HTTP.
    var httpError: any HTTPErrorConvertible {
        switch self {
        case .media(.notFound(let d)): APIError.notFound(d, code: "media-not-found")
        case .media(.invalid(let d)): APIError.unprocessable(d, code: "invalid-sdp")
        case .media(.unsupported(let d)): APIError.unprocessable(d, code: "unsupported-media")
        case .media(.socket(let d)): APIError(status: 503, code: "media-unavailable", title: "Service Unavailable", detail: d)

        case .notJoined:
            APIError(status: 403, code: "not-joined", title: "Forbidden", detail: "Join the conversation before sending or receiving media.")
        case .notPublishing: APIError(status: 409, code: "not-publishing", title: "Conflict", detail: "Send rtc:publish first.")
        case .noOffer: APIError(status: 409, code: "no-offer", title: "Conflict", detail: "No offer is waiting for an answer.")
        case .noAudio: APIError.unprocessable("The offer has no audio track.", code: "no-audio")
        case .roomFull(let capacity): PlatformError.full(capacity: capacity)

        case .notConnected: VideoError.notConnected
        case .invalidToken(let d): VideoError(code: "invalidToken", detail: d)
        case .tokenExpired: VideoError(code: "tokenExpired", detail: "The token has expired.")
        case .sessionNotFound: VideoError(code: "sessionNotFound", detail: "No such session.")
        case .notAllowedToPublish(let role):
            VideoError(code: "notAllowedToPublish", detail: "The token's role (\(role.rawValue)) does not allow publishing.")
        case .notAllowedToSubscribe: VideoError(code: "notAllowedToSubscribe", detail: "The token's role does not allow subscribing.")
        case .publishFailed(let e): VideoError(code: "publishFailed", detail: "The media server refused the offer: \(e)")
        // Clients have always seen a refused video subscription as an unexplained failure.
        case .subscriptionFailed: APIError.internalError("The request failed.")
        case .streamNotFound(own: true): VideoError(code: "notFound", detail: "No such stream of this connection.")
        case .streamNotFound(own: false): VideoError(code: "notFound", detail: "No such stream in this session.")
        case .connectionNotFound: VideoError(code: "notFound", detail: "No such connection in this session.")
        case .invalidSignal:
            VideoError(code: "invalidSignal",
                       detail: "type is at most \(VideoHub.Limits.signalType) bytes and data at most \(VideoHub.Limits.signalData).")
        case .relayedSession:
            VideoError(code: "relayedSession", detail: "The session is relayed: publish without an offer, and send media to each subscriber (video:relay).")
        case .relayNotFound: VideoError(code: "notFound", detail: "No such relayed subscription of this connection.")
        case .invalidRelay:
            VideoError(code: "invalidRelay", detail: "Relay a description {type: offer|answer|pranswer|rollback, sdp ≤ \(VideoHub.Limits.relayDescription) bytes} or a candidate {candidate ≤ \(VideoHub.Limits.relayCandidate) bytes, sdpMid?, sdpMLineIndex?}.")
        case .notModerator(.forceDisconnect): VideoError(code: "notAllowed", detail: "Only a moderator may force a disconnect.")
        case .notModerator(.forceMute): VideoError(code: "notAllowed", detail: "Only a moderator may mute others.")

        case .noPendingSubscription(let id): APIError.notFound("No subscription waits for an answer on \(id).")
        }
    }
}

/// Runs a call into Live and answers its refusals with their wire errors; other errors (the store's)
/// pass through unchanged.
func answeringLiveErrors<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as LiveError {
        throw error.httpError
    }
}
