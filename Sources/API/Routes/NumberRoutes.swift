import Foundation
import Platform
import Runtime

/// Numbers API shapes: `/number/buy|update|cancel` and `GET /account/numbers`. Credentials as Basic auth or
/// `api_key`/`api_secret` parameters; bodies form-encoded or JSON.
struct NumberRoutes {
    let core: PlatformCore
    let authenticator: Authenticator

    func register(on router: inout Router) {
        router.post("/number/buy") { [core, authenticator] req in
            let account = try req.requireAccount(authenticator: authenticator, allowParameters: true)
            let p = try Self.params(req)
            let number = try core.numbers.buy(apiKey: account.apiKey, country: try Self.need(p, "country"), msisdn: try Self.need(p, "msisdn"))
            if let trunk = p["trunk_id"].flatMap({ $0.isEmpty ? nil : $0 }) {
                // A Switchboard extension: the SIP trunk the number lives on.
                let id = try core.sipTrunks.get(id: trunk, apiKey: account.apiKey).id
                _ = try core.numbers.assignTrunk(msisdn: number.msisdn, apiKey: account.apiKey, trunkID: id)
            }
            return Self.success()
        }
        router.post("/number/update") { [core, authenticator] req in
            let account = try req.requireAccount(authenticator: authenticator, allowParameters: true)
            let p = try Self.params(req)
            let appID = p["app_id"].flatMap { $0.isEmpty ? nil : $0 }
            if let appID { _ = try core.applications.get(id: appID, apiKey: account.apiKey) }
            let msisdn = try Self.need(p, "msisdn")
            if let trunk = p["trunk_id"] {
                let id = trunk.isEmpty ? nil : try core.sipTrunks.get(id: trunk, apiKey: account.apiKey).id
                _ = try core.numbers.assignTrunk(msisdn: msisdn, apiKey: account.apiKey, trunkID: id)
            }
            if p["app_id"] != nil || p["trunk_id"] == nil {
                _ = try core.numbers.link(msisdn: msisdn, apiKey: account.apiKey, applicationID: appID)
            }
            return Self.success()
        }
        router.post("/number/cancel") { [core, authenticator] req in
            let account = try req.requireAccount(authenticator: authenticator, allowParameters: true)
            let p = try Self.params(req)
            try core.numbers.cancel(msisdn: try Self.need(p, "msisdn"), apiKey: account.apiKey)
            return Self.success()
        }
        router.get("/account/numbers") { [core, authenticator] req in
            let account = try req.requireAccount(authenticator: authenticator, allowParameters: true)
            let q = req.query
            let all = try core.numbers.list(apiKey: account.apiKey, applicationID: q["application_id"], pattern: q["pattern"])
            let size = try ApplicationRoutes.int(q["size"], default: 10, range: 1...100, name: "size")
            let index = try ApplicationRoutes.int(q["index"], default: 1, range: 1...1_000_000, name: "index")
            let page = all.dropFirst((index - 1) * size).prefix(size)
            return .jsonObject(["count": all.count, "numbers": page.map { n -> [String: Any] in
                var o: [String: Any] = ["country": n.country, "msisdn": n.msisdn, "type": n.type, "features": n.features]
                if let t = n.trunkID { o["trunk_id"] = t }
                if let a = n.applicationID { o["app_id"] = a; o["messagesCallbackType"] = "app"; o["voiceCallbackType"] = "app"; o["voiceCallbackValue"] = a }
                return o
            }])
        }
    }

    static func params(_ req: HTTPRequest) throws -> [String: String] {
        var p = req.query
        if req.headers["content-type"]?.lowercased().hasPrefix("application/json") == true {
            guard case .object(let o) = try req.json() else { throw APIError.badRequest("The body must be a JSON object.") }
            for (k, v) in o { p[k] = v.stringValue ?? v.intValue.map(String.init) ?? "" }
        } else {
            p.merge(req.form) { _, b in b }
        }
        return p
    }

    static func need(_ p: [String: String], _ key: String) throws -> String {
        guard let v = p[key], !v.isEmpty else { throw APIError.badRequest("\(key) is required.", code: "missing-parameter") }
        return v
    }

    static func success() -> HTTPResponse { .jsonObject(["error-code": "200", "error-code-label": "success"]) }
}
