import Foundation
import Live
import Platform
import Runtime
import Wire

/// Live captions: `POST /v2/project/{id}/captions` starts them on a routed session of the project (a
/// moderator's token for it, as the Video API asks) and answers 202 `{captionsId}`;
/// `POST /v2/project/{id}/captions/{captionsId}/stop` stops them, 202.
extension VideoRoutes {
    func registerCaptions(on router: inout Router) {
        guard let captions else { return }
        let (core, hub) = (self.core, self.hub)
        Metrics.shared.gauge("switchboard_video_captions", help: "Video sessions being captioned.") { Double(captions.count) }
        Metrics.shared.gauge("switchboard_video_captioned_voices", help: "Streams live captions transcribe, all sessions together.") {
            Double(captions.voices)
        }
        router.post("/v2/project/:pid/captions") { req in
            let (_, project) = try Self.projectCredentials(req, core: core, project: req.parameter("pid"))
            let ask = try VideoCaptions.Request(try req.json())
            let grant = try Self.serverConnectionGrant(core: core, hub: hub, project: project, sessionID: ask.sessionID, token: ask.token,
                                                       streams: nil, unknownSession: .badRequest("sessionId is not a session of this project."),
                                                       relayed: "Only routed sessions can be captioned.")
            guard grant.role.canModerate else { throw APIError.badRequest("token must have the moderator role.", code: "invalid-token") }
            let started = try captions.start(ask, project: project)
            return .jsonObject(["captionsId": started.id], status: 202)
        }
        router.post("/v2/project/:pid/captions/:cid/stop") { req in
            let (_, project) = try Self.projectCredentials(req, core: core, project: req.parameter("pid"))
            guard captions.stop(id: req.parameter("cid"), project: project) else {
                throw APIError.notFound("No captions with that id are running.")
            }
            return .jsonObject([String: Any](), status: 202)
        }
    }
}
