import Foundation
import Platform
import Runtime
import Wire

/// Users API (`/v1/users`) and the legacy `POST /v0.1/users`, with application or user JWTs.
struct UserRoutes {
    let core: PlatformCore

    func register(on router: inout Router) {
        router.post("/v1/users") { [core] req in
            let app = try req.requireApplicationToken()
            let user = try core.users.create(applicationID: app.id, input: UserInput(json: try req.json()))
            return .jsonObject(Self.render(user, base: req.baseURL), status: 201)
        }
        router.post("/v0.1/users") { [core] req in
            let app = try req.requireApplicationToken()
            let user = try core.users.create(applicationID: app.id, input: UserInput(json: try req.json()))
            return .jsonObject(["id": user.id, "href": "\(req.baseURL)/v0.1/users/\(user.id)"], status: 201)
        }
        router.get("/v1/users") { [core] req in
            let (app, _) = try req.requireApplication()
            let q = req.query
            let page = try PageRequest.parse(q)
            let result = try core.users.list(applicationID: app.id, page: page, name: q["name"])
            var env = result.envelope(name: "users", path: "\(req.baseURL)/v1/users", query: q.filter { $0.key == "name" || $0.key == "order" || $0.key == "cursor" }) { u in
                ["id": u.id, "name": u.name, "display_name": u.displayName as Any? ?? NSNull(), "_links": ["self": ["href": "\(req.baseURL)/v1/users/\(u.id)"]]]
            }
            var links = env["_links"] as? [String: Any] ?? [:]
            links["first"] = ["href": "\(req.baseURL)/v1/users?page_size=\(page.pageSize)&order=\(page.order.rawValue)"]
            env["_links"] = links
            return .jsonObject(env)
        }
        router.get("/v1/users/:id") { [core] req in
            let (app, _) = try req.requireApplication()
            guard let user = try core.users.resolve(req.parameter("id"), applicationID: app.id) else { throw PlatformError.notFound("user") }
            return .jsonObject(Self.render(user, base: req.baseURL))
        }
        router.patch("/v1/users/:id") { [core] req in
            let (app, p) = try req.requireApplication()
            if let me = p.user, me.id != req.parameter("id") { throw APIError.forbidden("A user may only change itself.") }
            let user = try core.users.update(id: req.parameter("id"), applicationID: app.id, input: UserInput(json: try req.json()))
            return .jsonObject(Self.render(user, base: req.baseURL))
        }
        router.delete("/v1/users/:id") { [core] req in
            let app = try req.requireApplicationToken()
            try core.users.delete(id: req.parameter("id"), applicationID: app.id)
            return .noContent()
        }
    }

    static func render(_ u: User, base: String) -> [String: Any] {
        var properties = JSONBridge.object(u.properties) as? [String: Any] ?? [:]
        if properties["custom_data"] == nil { properties["custom_data"] = [String: Any]() }
        return [
            "id": u.id, "name": u.name, "display_name": u.displayName as Any? ?? NSNull(), "image_url": u.imageURL as Any? ?? NSNull(),
            "properties": properties, "channels": [String: Any](),
            "_links": ["self": ["href": "\(base)/v1/users/\(u.id)"]],
        ]
    }
}
