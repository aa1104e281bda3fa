import Foundation
import Platform
import Runtime
import Telephony
import Wire

/// SIP trunks and device passwords (a Switchboard extension; account Basic auth):
/// `POST/GET /v1/sip/trunks`, `GET/PATCH/DELETE /v1/sip/trunks/:id`, `PUT /v1/sip/devices/:app_id/:user`.
struct SIPRoutes {
    let core: PlatformCore
    let authenticator: Authenticator
    let service: SIPService?

    func register(on router: inout Router) {
        router.post("/v1/sip/trunks") { [core, authenticator, service] req in
            let account = try req.requireAccount(authenticator: authenticator)
            let trunk = try core.sipTrunks.create(apiKey: account.apiKey, input: try Self.input(req))
            return .jsonObject(Self.render(trunk, service: service, base: req.baseURL), status: 201)
        }
        router.get("/v1/sip/trunks") { [core, authenticator, service] req in
            let account = try req.requireAccount(authenticator: authenticator)
            let trunks = try core.sipTrunks.list(apiKey: account.apiKey)
            return .jsonObject(["count": trunks.count, "trunks": trunks.map { Self.render($0, service: service, base: req.baseURL) }])
        }
        router.get("/v1/sip/trunks/:id") { [core, authenticator, service] req in
            let account = try req.requireAccount(authenticator: authenticator)
            return .jsonObject(Self.render(try core.sipTrunks.get(id: req.parameter("id"), apiKey: account.apiKey), service: service,
                                           base: req.baseURL))
        }
        router.patch("/v1/sip/trunks/:id") { [core, authenticator, service] req in
            let account = try req.requireAccount(authenticator: authenticator)
            let trunk = try core.sipTrunks.update(id: req.parameter("id"), apiKey: account.apiKey, input: try Self.input(req))
            return .jsonObject(Self.render(trunk, service: service, base: req.baseURL))
        }
        router.delete("/v1/sip/trunks/:id") { [core, authenticator] req in
            let account = try req.requireAccount(authenticator: authenticator)
            try core.sipTrunks.delete(id: req.parameter("id"), apiKey: account.apiKey)
            return .noContent()
        }
        router.put("/v1/sip/devices/:app_id/:user") { [core, authenticator] req in
            let account = try req.requireAccount(authenticator: authenticator)
            let app = try core.applications.get(id: req.parameter("app_id"), apiKey: account.apiKey)
            guard case .object(let o) = try req.json(), let password = o["password"]?.stringValue else {
                throw APIError.badRequest("password is required.", code: "missing-parameter")
            }
            try core.sipCredentials.setPassword(applicationID: app.id, user: req.parameter("user"), password: password)
            return .noContent()
        }
        router.delete("/v1/sip/devices/:app_id/:user") { [core, authenticator] req in
            let account = try req.requireAccount(authenticator: authenticator)
            let app = try core.applications.get(id: req.parameter("app_id"), apiKey: account.apiKey)
            try core.sipCredentials.remove(applicationID: app.id, user: req.parameter("user"))
            return .noContent()
        }
    }

    static func input(_ req: HTTPRequest) throws -> SIPTrunkInput {
        guard case .object(let o) = try req.json() else { throw APIError.badRequest("The body must be a JSON object.") }
        let known: Set<String> = ["name", "host", "port", "transport", "username", "password", "register", "allow", "health_interval", "media_encryption", "dtmf"]
        if let unknown = o.keys.sorted().first(where: { !known.contains($0) }) {
            throw APIError.badRequest("Unknown field \(unknown).", code: "invalid-parameter")
        }
        func string(_ k: String) throws -> String? {
            guard let v = o[k] else { return nil }
            guard let s = v.stringValue else { throw APIError.badRequest("\(k) must be a string.", code: "invalid-parameter") }
            return s
        }
        func optionalString(_ k: String) throws -> String?? {
            guard let v = o[k] else { return nil }
            if case .null = v { return .some(nil) }
            return .some(try string(k))
        }
        func int(_ k: String) throws -> Int? {
            guard let v = o[k] else { return nil }
            guard let n = v.intValue else { throw APIError.badRequest("\(k) must be an integer.", code: "invalid-parameter") }
            return n
        }
        var input = SIPTrunkInput(name: try string("name"), host: try string("host"), port: try int("port"), transport: try string("transport"),
                                  username: try optionalString("username"), password: try optionalString("password"),
                                  healthInterval: try int("health_interval"), mediaEncryption: try string("media_encryption"),
                                  dtmf: try string("dtmf"))
        if let v = o["register"] {
            guard let b = v.boolValue else { throw APIError.badRequest("register must be true or false.", code: "invalid-parameter") }
            input.register = b
        }
        if let v = o["allow"] {
            guard let a = v.arrayValue, a.allSatisfy({ $0.stringValue != nil }) else {
                throw APIError.badRequest("allow must be an array of addresses or CIDR ranges.", code: "invalid-parameter")
            }
            input.allow = a.compactMap(\.stringValue)
        }
        return input
    }

    static func render(_ t: SIPTrunk, service: SIPService?, base: String) -> [String: Any] {
        var o: [String: Any] = ["id": t.id, "name": t.name, "host": t.host, "port": t.port, "transport": t.transport,
                                "register": t.register, "allow": t.allow, "health_interval": t.healthInterval,
                                "media_encryption": t.mediaEncryption, "dtmf": t.dtmf,
                                "has_password": t.password != nil,
                                "_links": ["self": ["href": "\(base)/v1/sip/trunks/\(t.id)"]]]
        o["username"] = t.username ?? NSNull()
        let status = service?.status(ofTrunk: t.id)
        o["status"] = status?.up.map { $0 ? "up" : "down" } ?? "unknown"
        switch status?.registration {
        case .registered(let expires)?: o["registration"] = ["state": "registered", "expires": expires]
        case .failed(let code)?: o["registration"] = ["state": "failed", "status": code]
        case .pending?: o["registration"] = ["state": "pending"]
        case .notRequired?, nil: o["registration"] = ["state": t.register ? "pending" : "not_required"]
        }
        return o
    }
}
