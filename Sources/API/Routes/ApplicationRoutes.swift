import Foundation
import Platform
import Runtime
import Wire

/// Applications API v2 (`/v2/applications`, Basic auth).
struct ApplicationRoutes {
    let core: PlatformCore

    func register(on router: inout Router) {
        router.post("/v2/applications") { [core] req in
            let account = try req.requireAccount()
            let input = try ApplicationInput(json: try req.json())
            // RSA key generation takes tens of milliseconds: keep it off the connection's event loop.
            let created = try await Task.detached { try core.applications.create(apiKey: account.apiKey, input: input) }.value
            return .jsonObject(Self.render(created.0, privateKey: created.privateKey), status: 201)
        }
        router.get("/v2/applications") { [core] req in
            let account = try req.requireAccount()
            let q = req.query
            let pageSize = try Self.int(q["page_size"], default: 10, range: 1...100, name: "page_size")
            let page = try Self.int(q["page"], default: 1, range: 1...1_000_000, name: "page")
            let (items, total) = try core.applications.list(apiKey: account.apiKey, page: page, pageSize: pageSize)
            let pages = max(1, (total + pageSize - 1) / pageSize)
            func href(_ p: Int) -> [String: String] { ["href": "/v2/applications?page_size=\(pageSize)&page=\(p)"] }
            var links: [String: Any] = ["self": href(page), "first": href(1), "last": href(pages)]
            if page < pages { links["next"] = href(page + 1) }
            if page > 1 { links["prev"] = href(page - 1) }
            return .jsonObject([
                "page_size": pageSize, "page": page, "total_items": total, "total_pages": pages,
                "_embedded": ["applications": items.map { Self.render($0, privateKey: nil) }], "_links": links,
            ])
        }
        router.get("/v2/applications/:id") { [core] req in
            let account = try req.requireAccount()
            return .jsonObject(Self.render(try core.applications.get(id: req.parameter("id"), apiKey: account.apiKey), privateKey: nil))
        }
        router.put("/v2/applications/:id") { [core] req in
            let account = try req.requireAccount()
            let app = try core.applications.update(id: req.parameter("id"), apiKey: account.apiKey, input: ApplicationInput(json: try req.json()))
            return .jsonObject(Self.render(app, privateKey: nil))
        }
        router.delete("/v2/applications/:id") { [core] req in
            let account = try req.requireAccount()
            try core.applications.delete(id: req.parameter("id"), apiKey: account.apiKey)
            return .noContent()
        }
    }

    static func int(_ s: String?, default d: Int, range: ClosedRange<Int>, name: String) throws -> Int {
        guard let s else { return d }
        guard let n = Int(s), range.contains(n) else {
            throw APIError.badRequest("\(name) must be a number between \(range.lowerBound) and \(range.upperBound).")
        }
        return n
    }

    static func render(_ app: Application, privateKey: String?) -> [String: Any] {
        var keys: [String: Any] = ["public_key": app.publicKey]
        if let privateKey { keys["private_key"] = privateKey }
        return [
            "id": app.id, "name": app.name, "keys": keys,
            "capabilities": JSONBridge.object(app.capabilities),
            // Vonage shows the per-application secret only in its dashboard; here the account owner reads it
            // from the API so webhook receivers can verify signed callbacks.
            "signature_secret": app.signatureSecret,
            "privacy": ["improve_ai": false],
            "_links": ["self": ["href": "/v2/applications/\(app.id)"]],
        ]
    }
}

/// JSONValue ↔ JSONSerialization objects.
enum JSONBridge {
    static func object(_ v: JSONValue) -> Any {
        switch v {
        case .null: return NSNull()
        case .bool(let b): return b
        case .number(let n): return n.rounded() == n && abs(n) < 1e15 ? Int(n) as Any : n as Any
        case .string(let s): return s
        case .array(let a): return a.map(object)
        case .object(let o): return o.mapValues(object)
        }
    }
}
