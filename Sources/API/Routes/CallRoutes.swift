import Foundation
import Live
import Platform
import Runtime
import Wire

/// The Voice API (`/v1/calls`): placing, listing and controlling calls with an application JWT.
struct CallRoutes {
    let core: PlatformCore
    let calls: Calls

    func register(on router: inout Router) {
        let (core, calls) = (core, calls)

        router.post("/v1/calls") { req in
            let app = try req.requireApplicationToken()
            let placement = try Self.placement(try req.json(), app: app, core: core)
            let leg = try calls.place(placement)
            return .json(["uuid": leg.uuid, "status": leg.status.rawValue, "direction": leg.direction.rawValue,
                          "conversation_uuid": leg.conversationID] as [String: String], status: 201)
        }
        router.get("/v1/calls") { req in
            let app = try req.requireApplicationToken()
            let q = req.query
            let filter = try Self.filter(q)
            let (legs, count) = try core.calls.list(applicationID: app.id, filter: filter)
            var query = q.filter { ["status", "date_start", "date_end", "conversation_uuid", "order"].contains($0.key) }
            query["page_size"] = String(filter.pageSize)
            func href(_ index: Int) -> JSONValue {
                var qq = query
                qq["record_index"] = String(index)
                return ["href": .string("\(req.baseURL)/v1/calls?" + FormDecoding.encode(qq.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))]
            }
            var links: [String: JSONValue] = ["self": href(filter.recordIndex)]
            if filter.recordIndex + legs.count < count { links["next"] = href(filter.recordIndex + filter.pageSize) }
            if filter.recordIndex > 0 { links["prev"] = href(max(0, filter.recordIndex - filter.pageSize)) }
            let body: JSONValue = ["count": .number(Double(count)), "page_size": .number(Double(filter.pageSize)),
                                   "record_index": .number(Double(filter.recordIndex)), "_links": .object(links),
                                   "_embedded": ["calls": .array(legs.map { $0.json(base: req.baseURL) })]]
            return .json(body)
        }
        router.get("/v1/calls/:uuid") { req in
            let app = try req.requireApplicationToken()
            return .json(try core.calls.get(uuid: req.parameter("uuid"), applicationID: app.id).json(base: req.baseURL))
        }
        router.put("/v1/calls/:uuid") { req in
            let app = try req.requireApplicationToken()
            let uuid = req.parameter("uuid")
            let body = try req.json()
            guard let action = body["action"]?.stringValue else { throw APIError.badRequest("action is required.", code: "missing-action") }
            try await Self.answering {
                switch action {
                case "hangup": try await calls.hangup(uuid: uuid, applicationID: app.id)
                case "mute", "unmute": try await calls.setMedia(uuid: uuid, applicationID: app.id, muted: action == "mute")
                case "earmuff", "unearmuff": try await calls.setMedia(uuid: uuid, applicationID: app.id, earmuffed: action == "earmuff")
                case "transfer":
                    guard let destination = body["destination"] else { throw APIError.badRequest("destination is required.", code: "missing-destination") }
                    if let document = destination["ncco"] {
                        try await calls.transfer(uuid: uuid, applicationID: app.id, ncco: try Self.ncco(document, field: "destination.ncco"))
                    } else if let url = destination["url"] {
                        guard let u = url[0]?.stringValue ?? url.stringValue, u.hasPrefix("http://") || u.hasPrefix("https://") else {
                            throw APIError.badRequest("destination.url must be an array of one http(s) URL.", code: "invalid-destination")
                        }
                        try await calls.transfer(uuid: uuid, applicationID: app.id, to: VoiceWebhooks.Target(url: u, method: .GET))
                    } else {
                        throw APIError.badRequest("destination needs ncco or url.", code: "invalid-destination")
                    }
                default:
                    throw APIError.badRequest("action must be hangup, mute, unmute, earmuff, unearmuff or transfer.", code: "invalid-action")
                }
            }
            return .noContent()
        }
        router.put("/v1/calls/:uuid/talk") { req in
            let app = try req.requireApplicationToken()
            let uuid = req.parameter("uuid")
            var o = try req.json().objectValue ?? [:]
            o["action"] = "talk"
            o["queue"] = nil
            guard case .talk(let talk) = try Self.action(.object(o)) else { throw APIError.badRequest("text is required.") }
            try await Self.answering { try await calls.perform(.say(talk), uuid: uuid, applicationID: app.id) }
            return .json(["message": "Talk started", "uuid": uuid] as [String: String])
        }
        router.delete("/v1/calls/:uuid/talk") { req in
            let app = try req.requireApplicationToken()
            let uuid = req.parameter("uuid")
            try await Self.answering { try await calls.stopMedia(uuid: uuid, applicationID: app.id) }
            return .json(["message": "Talk stopped", "uuid": uuid] as [String: String])
        }
        router.put("/v1/calls/:uuid/stream") { req in
            let app = try req.requireApplicationToken()
            let uuid = req.parameter("uuid")
            let body = try req.json()
            var o: [String: JSONValue] = ["action": "stream"]
            guard let url = body["stream_url"] ?? body["streamUrl"] else { throw APIError.badRequest("stream_url is required.", code: "missing-stream-url") }
            o["streamUrl"] = url
            if let loop = body["loop"] { o["loop"] = loop }
            if let level = body["level"] { o["level"] = level }
            guard case .stream(let stream) = try Self.action(.object(o)) else { throw APIError.badRequest("stream_url is required.") }
            try await Self.answering { try await calls.perform(.play(stream), uuid: uuid, applicationID: app.id) }
            return .json(["message": "Stream started", "uuid": uuid] as [String: String])
        }
        router.delete("/v1/calls/:uuid/stream") { req in
            let app = try req.requireApplicationToken()
            let uuid = req.parameter("uuid")
            try await Self.answering { try await calls.stopMedia(uuid: uuid, applicationID: app.id) }
            return .json(["message": "Stream stopped", "uuid": uuid] as [String: String])
        }
        router.put("/v1/calls/:uuid/dtmf") { req in
            let app = try req.requireApplicationToken()
            let uuid = req.parameter("uuid")
            guard let digits = try req.json()["digits"]?.stringValue, !digits.isEmpty, digits.count <= 64,
                  digits.allSatisfy({ "0123456789*#pP".contains($0) }) else {
                throw APIError.badRequest("digits must be 1 to 64 of 0-9, *, # and p.", code: "invalid-digits")
            }
            try await Self.answering { try await calls.perform(.sendDigits(digits), uuid: uuid, applicationID: app.id) }
            return .json(["message": "DTMF sent", "uuid": uuid] as [String: String])
        }
        // An asynchronous input's keys sent to another URL while the listener is registered.
        router.put("/v1/calls/:uuid/input/dtmf") { req in
            let app = try req.requireApplicationToken()
            let uuid = req.parameter("uuid")
            let value = try req.json()["event_url"]
            guard let url = value?[0]?.stringValue ?? value?.stringValue, url.hasPrefix("http://") || url.hasPrefix("https://"),
                  CallEndpoint.isPlainURL(url) else {
                throw APIError.badRequest("event_url must be an array of one http(s) URL.", code: "invalid-event-url")
            }
            try await Self.answering { try await calls.listenForKeys(uuid: uuid, applicationID: app.id, url: url) }
            return .noContent()
        }
        router.delete("/v1/calls/:uuid/input/dtmf") { req in
            let app = try req.requireApplicationToken()
            let uuid = req.parameter("uuid")
            try await Self.answering { try await calls.listenForKeys(uuid: uuid, applicationID: app.id, url: nil) }
            return .noContent()
        }
    }

    /// Calls' refusals as HTTP errors.
    static func answering(_ body: () async throws -> Void) async throws {
        do { try await body() } catch let e as CallError { throw e.httpError }
    }

    static func ncco(_ document: JSONValue, field: String) throws -> NCCO {
        do { return try NCCO.parse(document) } catch {
            throw APIError(status: 400, code: error.code, title: "Bad Request", detail: "\(field): \(error.description)")
        }
    }

    static func action(_ o: JSONValue) throws -> NCCOAction {
        do { return try NCCOAction.parse(o, index: 0) } catch {
            var e = error
            e.index = nil
            e.action = nil
            throw APIError(status: 400, code: e.code, title: "Bad Request", detail: e.description)
        }
    }

    static func placement(_ body: JSONValue, app: Application, core: PlatformCore) throws -> Calls.Placement {
        guard case .object(let o) = body else { throw APIError.badRequest("The body must be a JSON object.", code: "invalid-json") }
        func endpointError(_ e: NCCOError) -> APIError { APIError(status: 400, code: "invalid-endpoint", title: "Bad Request", detail: e.description) }
        guard case .array(let toList)? = o["to"], toList.count == 1 else {
            throw APIError.badRequest("to must be an array of one endpoint.", code: "invalid-endpoint")
        }
        let to: CallEndpoint
        do { to = try CallEndpoint.parse(toList[0], field: "to[0]") } catch { throw endpointError(error) }
        let random = o["random_from_number"]?.boolValue ?? false
        var from: CallEndpoint
        if let f = o["from"] {
            guard !random else { throw APIError.badRequest("from and random_from_number cannot both be given.", code: "invalid-from") }
            do { from = try CallEndpoint.parse(f, field: "from") } catch { throw endpointError(error) }
        } else if random {
            guard let number = try core.numbers.list(apiKey: app.apiKey, applicationID: app.id).randomElement() else {
                throw APIError.badRequest("random_from_number needs a number linked to the application.", code: "no-number")
            }
            from = .phone(number: number.msisdn, dtmfAnswer: nil)
        } else {
            throw APIError.badRequest("from or random_from_number is required.", code: "missing-from")
        }
        if case .phone = from {} else if case .app = to {} else {
            throw APIError.badRequest("from must be a phone endpoint.", code: "invalid-from")
        }
        var ncco: NCCO?
        var answer: VoiceWebhooks.Target?
        if let document = o["ncco"] {
            guard o["answer_url"] == nil else { throw APIError.badRequest("Give ncco or answer_url, not both.", code: "invalid-answer") }
            ncco = try Self.ncco(document, field: "ncco")
        } else if let a = o["answer_url"] {
            answer = VoiceWebhooks.Target(url: try url(a, "answer_url"), method: try method(o["answer_method"], "answer_method", default: .GET))
        } else if app.voiceAnswer == nil {
            throw APIError.badRequest("ncco or answer_url is required.", code: "missing-answer")
        }
        var p = Calls.Placement(application: app, to: to, from: from, ncco: ncco, answer: answer)
        if let e = o["event_url"] {
            p.event = VoiceWebhooks.Target(url: try url(e, "event_url"), method: try method(o["event_method"], "event_method", default: .POST))
        }
        if let r = o["ringing_timer"] {
            guard let n = r.intValue, (1...120).contains(n) else { throw APIError.badRequest("ringing_timer must be 1 to 120 seconds.", code: "invalid-timer") }
            p.ringingTimer = n
        }
        if let l = o["length_timer"] {
            guard let n = l.intValue, (1...7200).contains(n) else { throw APIError.badRequest("length_timer must be 1 to 7200 seconds.", code: "invalid-timer") }
            p.lengthTimer = n
        }
        p.machineDetection = try machineDetection(o)
        if p.machineDetection != nil, to.kind != .phone, to.kind != .sip {
            throw APIError.badRequest("machine detection listens to a phone or sip call's audio, not a \(to.kind.rawValue) endpoint's.",
                                      code: "invalid-machine-detection")
        }
        return p
    }

    static func machineDetection(_ o: [String: JSONValue]) throws -> MachineDetection? {
        do {
            return try MachineDetection.parse(standard: o["machine_detection"], standardName: "machine_detection",
                                              advanced: o["advanced_machine_detection"], advancedName: "advanced_machine_detection")
        } catch {
            throw APIError.badRequest("\(error.field) \(error.reason).", code: "invalid-machine-detection")
        }
    }

    static func url(_ v: JSONValue, _ field: String) throws -> String {
        guard let u = v[0]?.stringValue ?? v.stringValue, u.hasPrefix("http://") || u.hasPrefix("https://"), u.count <= 2048,
              !u.contains(" ") else {
            throw APIError.badRequest("\(field) must be an array of one http(s) URL.", code: "invalid-url")
        }
        return u
    }

    static func method(_ v: JSONValue?, _ field: String, default d: HTTPMethod) throws -> HTTPMethod {
        guard let v else { return d }
        switch v.stringValue?.uppercased() {
        case "GET": return .GET
        case "POST": return .POST
        default: throw APIError.badRequest("\(field) must be GET or POST.", code: "invalid-method")
        }
    }

    static func filter(_ q: [String: String]) throws -> CallLegs.Filter {
        var f = CallLegs.Filter()
        if let s = q["status"] {
            guard let st = CallStatus(rawValue: s) else { throw APIError.badRequest("status is not a call status.", code: "invalid-status") }
            f.status = st
        }
        let iso = ISO8601DateFormatter()
        let isoFraction = ISO8601DateFormatter()
        isoFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for (key, path) in [("date_start", \CallLegs.Filter.dateStart), ("date_end", \CallLegs.Filter.dateEnd)] {
            if let s = q[key] {
                guard let d = iso.date(from: s) ?? isoFraction.date(from: s) else {
                    throw APIError.badRequest("\(key) must be an ISO 8601 time such as 2026-01-02T03:04:05Z.", code: "invalid-date")
                }
                f[keyPath: path] = d
            }
        }
        f.conversationID = q["conversation_uuid"]
        if let s = q["page_size"] {
            guard let n = Int(s), (1...100).contains(n) else { throw APIError.badRequest("page_size must be between 1 and 100.", code: "invalid-page-size") }
            f.pageSize = n
        }
        if let s = q["record_index"] {
            guard let n = Int(s), n >= 0 else { throw APIError.badRequest("record_index must be 0 or more.", code: "invalid-record-index") }
            f.recordIndex = n
        }
        if let s = q["order"] {
            guard ["asc", "desc"].contains(s.lowercased()) else { throw APIError.badRequest("order must be asc or desc.", code: "invalid-order") }
            f.ascending = s.lowercased() == "asc"
        }
        return f
    }
}

extension CallError {
    var httpError: APIError {
        switch self {
        case .notLive: APIError.conflict("The call is not in progress.", code: "call-not-live")
        case .notYours: APIError.forbidden("The call is not this user's.")
        case .wrongState(let why): APIError.conflict(why.prefix(1).uppercased() + why.dropFirst() + ".", code: "invalid-call-state")
        case .media(let e): APIError(status: 501, code: "media-unavailable", title: "Not Implemented", detail: e.description)
        }
    }
}
