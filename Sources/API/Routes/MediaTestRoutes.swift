import Foundation
import Media
import Runtime
import Synchronization

/// Test-only signaling for the media plane (`switchboard serve --dev` only): enough to
/// drive interop tests and the load generator without the realtime gateway.
///
/// - `POST /test/media/rooms/:room/publish` — body: the client's SDP offer (raw, or JSON
///   `{"sdp": …}`) → `{"transport", "sdp" (answer), "producers"}`.
/// - `POST /test/media/rooms/:room/subscribe` → `{"transport", "sdp" (our offer)}`.
/// - `POST /test/media/transports/:id/answer` — body: the client's SDP answer → 204.
/// - `GET /test/media/transports/:id/stats`, `GET /test/media/stats`,
///   `DELETE /test/media/transports/:id`.
///
/// No authentication: never enable outside tests.
struct MediaTestRoutes {
    let engine: MediaEngine
    let state = RouteState()

    final class RouteState: Sendable {
        let rooms = Mutex<[String: RouterID]>([:])
        let pending = Mutex<[TransportID: MediaEngine.Subscription]>([:])
    }

    init(engine: MediaEngine) {
        self.engine = engine
    }

    func register(on router: inout Router) {
        let engine = engine
        let state = state
        router.post("/test/media/rooms/:room/publish", bodyLimit: 256 * 1024) { request in
            let room = try await Self.router(named: request.parameter("room"), engine: engine, state: state)
            do {
                let publication = try await engine.publish(router: room, offer: try Self.sdp(request))
                return .jsonObject([
                    "transport": publication.transport.rawValue, "sdp": publication.answer,
                    "producers": publication.producers.map { ["id": $0.id.rawValue, "kind": $0.parameters.kind.rawValue] },
                ])
            } catch { throw Self.apiError(error) }
        }
        router.post("/test/media/rooms/:room/subscribe", bodyLimit: 64 * 1024) { request in
            let room = try await Self.router(named: request.parameter("room"), engine: engine, state: state)
            do {
                let subscription = try await engine.subscribe(router: room)
                state.pending.withLock { $0[subscription.transport] = subscription }
                return .jsonObject([
                    "transport": subscription.transport.rawValue, "sdp": subscription.offer,
                    "consumers": subscription.consumers.map { ["id": $0.id.rawValue, "kind": $0.kind.rawValue, "ssrc": $0.ssrc] },
                ])
            } catch { throw Self.apiError(error) }
        }
        router.post("/test/media/transports/:id/answer", bodyLimit: 256 * 1024) { request in
            let id = TransportID(rawValue: request.parameter("id"))
            guard let subscription = state.pending.withLock({ $0.removeValue(forKey: id) }) else {
                throw APIError.notFound("No subscription waits for an answer on \(id).")
            }
            do { try await engine.completeSubscription(subscription, answer: try Self.sdp(request)) } catch {
                throw Self.apiError(error)
            }
            return .noContent()
        }
        router.get("/test/media/transports/:id/stats") { request in
            do {
                let stats = try await engine.stats(transport: TransportID(rawValue: request.parameter("id")))
                return .json(stats)
            } catch { throw Self.apiError(error) }
        }
        router.delete("/test/media/transports/:id") { request in
            let id = TransportID(rawValue: request.parameter("id"))
            state.pending.withLock { $0[id] = nil }
            do { try await engine.closeTransport(id) } catch {
                throw Self.apiError(error)
            }
            return .noContent()
        }
        router.get("/test/media/stats") { _ in
            .json(await engine.workerStats())
        }
    }

    static func router(named name: String, engine: MediaEngine, state: RouteState) async throws -> RouterID {
        if let id = state.rooms.withLock({ $0[name] }) { return id }
        let id = try await engine.createRouter()
        // Two first requests may race: keep the first router, drop the other.
        let winner = state.rooms.withLock { rooms -> RouterID in
            if let existing = rooms[name] { return existing }
            rooms[name] = id
            return id
        }
        if winner != id { _ = try? await engine.closeRouter(id) }
        return winner
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

    static func apiError(_ error: any Error) -> any Error {
        guard let media = error as? MediaError else { return error }
        switch media {
        case .notFound(let d): return APIError.notFound(d)
        case .invalid(let d), .unsupported(let d): return APIError.unprocessable(d)
        case .socket(let d): return APIError.unavailable(d)
        }
    }
}
