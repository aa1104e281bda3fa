import Foundation
import Runtime
import Synchronization
import Wire
@testable import SwitchboardClient

/// An application's voice webhooks on 127.0.0.1: the answer URL replies with `ncco`, the event URL
/// records every event in arrival order.
final class VoiceHooks: Sendable {
    let group = EventLoopGroup(threads: 1, name: "voice-hooks")
    let server: HTTPServer
    let url: String
    let log = Log()

    /// What the hooks received, in arrival order.
    final class Log: Sendable {
        let events = Mutex<[JSONValue]>([])
        let answers = Mutex<[JSONValue]>([])
    }

    var answers: [JSONValue] { log.answers.withLock { $0 } }

    init(ncco: JSONValue) throws {
        let log = log
        var router = Router()
        router.post("/answer") { request in
            if let body = try? JSONParser.parse(String(decoding: request.body, as: UTF8.self)) { log.answers.withLock { $0.append(body) } }
            return HTTPResponse(status: 200, body: Array(Session.encode(ncco).utf8))
        }
        router.post("/event") { request in
            if let body = try? JSONParser.parse(String(decoding: request.body, as: UTF8.self)) { log.events.withLock { $0.append(body) } }
            return HTTPResponse(status: 204)
        }
        server = HTTPServer(group: group, responder: HTTPApplication(router: router))
        let port = try server.listen(SocketAddress(host: "127.0.0.1", port: 0)).port
        url = "http://127.0.0.1:\(port)"
    }

    /// The application's `voice` capability pointing at these hooks.
    var capabilities: JSONValue {
        ["voice": ["webhooks": ["answer_url": ["address": .string(url + "/answer"), "http_method": "POST"],
                                "event_url": ["address": .string(url + "/event"), "http_method": "POST"]]]]
    }

    /// The statuses the event URL got for one leg, in order.
    func statuses(_ leg: CallID) -> [String] {
        log.events.withLock { $0.filter { $0["uuid"]?.stringValue == leg.rawValue }.compactMap { $0["status"]?.stringValue } }
    }

    func stop() async {
        await server.shutdown(gracePeriod: .milliseconds(100))
        group.shutdown()
    }
}
