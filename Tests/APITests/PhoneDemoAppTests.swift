import Foundation
import Platform
import Runtime
import Testing
import Wire
@testable import API

/// The dialer's built-in app server, answered in-process with no socket.
@Suite("Phone demo app server")
struct PhoneDemoAppTests {
    struct Harness {
        let platform: TestPlatform
        let demo: PhoneDemoApp
        let app: HTTPApplication

        init(testNumber: String? = nil) throws {
            platform = try TestPlatform()
            demo = PhoneDemoApp(core: platform.core, apiKey: platform.account.apiKey, dataDirectory: platform.directory,
                                testNumber: testNumber)
            demo.listening(on: SocketAddress(host: "127.0.0.1", port: 8080))
            var router = Router()
            demo.register(on: &router)
            app = HTTPApplication(router: router, middleware: [])
        }

        func send(_ method: HTTPMethod, _ target: String, json: JSONValue? = nil) async -> Reply {
            var headers = HTTPHeaders([("Host", "127.0.0.1:8080")])
            var body: [UInt8] = []
            if let json {
                body = Array(try! JSONEncoder().encode(json))
                headers["Content-Type"] = "application/json"
            }
            return Reply(response: await app.respond(to: HTTPRequest(head: HTTPRequestHead(method: method, target: target, headers: headers),
                                                                     body: body)))
        }
    }

    static let wait: JSONValue = ["action": "talk", "text": "Please wait while we connect you."]

    @Test("login creates the application with webhooks back at the server, and the user once")
    func login() async throws {
        let h = try Harness()
        let first = await h.send(.POST, "/phone/api/auth", json: ["name": "alice"])
        #expect(first.status == 200)
        #expect(first.json["name"] == "alice" && first.json["jwt"]?.stringValue?.isEmpty == false)
        let again = await h.send(.POST, "/phone/api/auth", json: ["name": "alice"])
        #expect(again.json["user_id"] == first.json["user_id"])
        let (appID, _) = try h.demo.application()
        let app = try #require(try h.platform.core.applications.get(id: appID))
        #expect(app.name == "phone-demo")
        #expect(app.voiceAnswer?.address == "http://127.0.0.1:8080/phone/api/answer" && app.voiceAnswer?.httpMethod == "GET")
        #expect(app.voiceEvent?.address == "http://127.0.0.1:8080/phone/api/event")
        let bad = await h.send(.POST, "/phone/api/auth", json: ["name": "  "])
        #expect(bad.status == 400 && bad.json["type"] != nil && bad.json["title"] != nil && bad.json["detail"] != nil)
    }

    @Test("a number gets the tutorial's talk and connect to a phone, a name a connect to the app user")
    func answer() async throws {
        let h = try Harness()
        let phone = await h.send(.GET, "/phone/api/answer?to=%2B15550100&from=alice&from_user=alice")
        #expect(phone.json == [Self.wait, ["action": "connect", "from": "15550199",
                                           "endpoint": [["type": "phone", "number": "15550100"]]]])
        let user = await h.send(.POST, "/phone/api/answer", json: ["to": "bob", "from_user": "alice"])
        #expect(user.json == [Self.wait, ["action": "connect", "endpoint": [["type": "app", "user": "bob"]]]])
        #expect(await h.send(.GET, "/phone/api/answer").status == 400)
    }

    @Test("the linked number is the caller id, and a call to it rings the last user to log in")
    func linkedNumber() async throws {
        let h = try Harness()
        let (appID, _) = try h.demo.application()
        let key = h.platform.account.apiKey
        _ = try h.platform.core.numbers.buy(apiKey: key, country: "US", msisdn: "15550123")
        _ = try h.platform.core.numbers.link(msisdn: "15550123", apiKey: key, applicationID: appID)
        let phone = await h.send(.GET, "/phone/api/answer?to=447700900001")
        #expect(phone.json[1]?["from"] == "15550123")
        let nobody = await h.send(.GET, "/phone/api/answer?to=15550123&from=447700900001")
        #expect(nobody.json.arrayValue?.count == 1 && nobody.json[0]?["action"] == "talk")
        _ = await h.send(.POST, "/phone/api/auth", json: ["name": "carol"])
        let inbound = await h.send(.GET, "/phone/api/answer?to=15550123&from=447700900001")
        #expect(inbound.json == [["action": "connect", "endpoint": [["type": "app", "user": "carol"]]]])
    }

    @Test("config tells the page the test number", arguments: [nil, "15550100"])
    func config(testNumber: String?) async throws {
        let h = try Harness(testNumber: testNumber)
        let reply = await h.send(.GET, "/phone/api/config")
        #expect(reply.json == ["test_number": testNumber.map(JSONValue.string) ?? .null])
        #expect(await h.send(.POST, "/phone/api/event", json: ["status": "answered", "uuid": "x"]).status == 204)
    }
}
