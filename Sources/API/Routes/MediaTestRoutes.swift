import Foundation
import Live
import Media
import Runtime

/// Test-only signaling for the media plane (`switchboard serve --dev` only): enough to
/// drive interop tests and the load generator without the realtime gateway. The rooms are
/// Live's `MediaBench`; these routes only translate HTTP.
///
/// - `POST /test/media/rooms/:room/publish` — body: the client's SDP offer (raw, or JSON
///   `{"sdp": …}`) → `{"transport", "sdp" (answer), "producers"}`.
/// - `POST /test/media/rooms/:room/subscribe` → `{"transport", "sdp" (our offer)}`.
/// - Both take `?mode=mixed|sfu` and `?capacity=N` (count when the request makes the room: a mixed
///   room mixes its publishers and gives subscribers the mix; its mixer holds N participants, default
///   256, every publisher and subscriber being one); a mixed room's subscribe takes `?speaker=<publishing
///   transport>` to hear as that publisher (its mix-minus), one leg that speaks and listens.
/// - `GET /test/media/ticks[?reset=1]` → per worker, how late its 20 ms ticks ran (µs); `reset`
///   starts the histogram again after reading, for a measured window.
/// - `POST /test/media/transports/:id/answer` — body: the client's SDP answer → 204.
/// - `GET /test/media/transports/:id/stats`, `GET /test/media/stats`,
///   `DELETE /test/media/transports/:id`.
///
/// No authentication: never enable outside tests.
struct MediaTestRoutes {
    let bench: MediaBench

    func register(on router: inout Router) {
        let bench = bench
        router.post("/test/media/rooms/:room/publish", bodyLimit: 256 * 1024) { request in
            try await answeringLiveErrors {
                let publication = try await bench.publish(room: request.parameter("room"), offer: try Self.sdp(request),
                                                          mode: try Self.mode(request), capacity: try Self.capacity(request))
                return .jsonObject([
                    "transport": publication.transport.rawValue, "sdp": publication.answer,
                    "producers": publication.producers.map { ["id": $0.id.rawValue, "kind": $0.parameters.kind.rawValue] },
                ])
            }
        }
        router.post("/test/media/rooms/:room/subscribe", bodyLimit: 64 * 1024) { request in
            try await answeringLiveErrors {
                let subscription = try await bench.subscribe(room: request.parameter("room"), mode: try Self.mode(request),
                                                             capacity: try Self.capacity(request),
                                                             speaker: request.query["speaker"].map { TransportID(rawValue: $0) })
                return .jsonObject([
                    "transport": subscription.transport.rawValue, "sdp": subscription.offer,
                    "consumers": subscription.consumers.map { ["id": $0.id.rawValue, "kind": $0.kind.rawValue, "ssrc": $0.ssrc] },
                ])
            }
        }
        router.post("/test/media/transports/:id/answer", bodyLimit: 256 * 1024) { request in
            try await answeringLiveErrors {
                try await bench.answer(transport: TransportID(rawValue: request.parameter("id")), sdp: try Self.sdp(request))
                return .noContent()
            }
        }
        router.get("/test/media/transports/:id/stats") { request in
            try await answeringLiveErrors {
                .json(try await bench.stats(transport: TransportID(rawValue: request.parameter("id"))))
            }
        }
        router.delete("/test/media/transports/:id") { request in
            try await answeringLiveErrors {
                try await bench.close(transport: TransportID(rawValue: request.parameter("id")))
                return .noContent()
            }
        }
        router.get("/test/media/stats") { _ in
            .json(await bench.workerStats())
        }
        router.get("/test/media/ticks") { request in
            .json(await bench.tickLateness(reset: request.query["reset"] == "1"))
        }
    }

    static func capacity(_ request: HTTPRequest) throws -> Int? {
        guard let text = request.query["capacity"] else { return nil }
        guard let n = Int(text), (1...10_000).contains(n) else { throw APIError.badRequest("capacity: expected 1 to 10000.") }
        return n
    }

    static func mode(_ request: HTTPRequest) throws -> RoomMode? {
        guard let text = request.query["mode"] else { return nil }
        guard let mode = RoomMode(rawValue: text), mode != .auto else { throw APIError.badRequest("mode: expected mixed or sfu.") }
        return mode
    }

    static func sdp(_ request: HTTPRequest) throws -> String {
        let text = String(decoding: request.body, as: UTF8.self)
        if text.hasPrefix("{") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
                  let sdp = object["sdp"] as? String else { throw APIError.badRequest("Expected {\"sdp\": \"…\"}.") }
            return sdp
        }
        guard text.hasPrefix("v=") else { throw APIError.badRequest("Expected an SDP body.") }
        return text
    }
}
