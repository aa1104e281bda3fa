import Foundation
import Live
import Platform
import Runtime
import Wire

/// Experience Composer (`VideoRenders`): `POST /v2/project/{id}/render` renders a web page into one of the project's
/// routed sessions (202 with the render, `starting`), `GET …/render[?offset&count]` lists the project's renders,
/// newest first, `GET …/render/{renderId}` is one, `DELETE …/render/{renderId}` stops it (200).
extension VideoRoutes {
    func registerRenders(on router: inout Router) {
        guard let renders else { return }
        let (core, hub) = (self.core, self.hub)
        Metrics.shared.gauge("switchboard_video_renders", help: "Experience Composers running (a headless browser each).") { Double(renders.count) }
        router.post("/v2/project/:pid/render") { req in
            let (_, project) = try Self.projectCredentials(req, core: core, project: req.parameter("pid"))
            let ask = try VideoRenders.Request(try req.json())
            _ = try Self.serverConnectionGrant(core: core, hub: hub, project: project, sessionID: ask.sessionID, token: ask.token, streams: nil,
                                               publishing: true, unknownSession: .badRequest("sessionId is not a session of this project."),
                                               relayed: "Only routed sessions can have an Experience Composer.")
            return .jsonObject(try renders.start(ask, project: project).json, status: 202)
        }
        router.get("/v2/project/:pid/render") { req in
            let (_, project) = try Self.projectCredentials(req, core: core, project: req.parameter("pid"))
            let offset = max(0, Int(req.query["offset"] ?? "") ?? 0)
            let count = min(1000, max(1, Int(req.query["count"] ?? "") ?? 50))
            let (total, items) = renders.list(project: project, offset: offset, count: count)
            return .jsonObject(["count": total, "items": items.map(\.json)])
        }
        router.get("/v2/project/:pid/render/:rid") { req in
            let (_, project) = try Self.projectCredentials(req, core: core, project: req.parameter("pid"))
            guard let render = renders.get(id: req.parameter("rid"), project: project) else {
                throw APIError.notFound("No Experience Composer with that id.")
            }
            return .jsonObject(render.json)
        }
        router.delete("/v2/project/:pid/render/:rid") { req in
            let (_, project) = try Self.projectCredentials(req, core: core, project: req.parameter("pid"))
            guard renders.stop(id: req.parameter("rid"), project: project) else {
                throw APIError.notFound("No Experience Composer with that id is running.")
            }
            // 200, as the `opentok` SDK expects (the `vonage` SDK takes any success).
            return .jsonObject([String: Any]())
        }
    }
}
