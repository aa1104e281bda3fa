import Crypto
import Foundation
import Store
import Wire

/// A video session: created through `/session/create`, owned by an api key or an application.
///
/// A session belongs to exactly one project, the one that created it: the account's api key (OpenTok
/// credentials, Basic, the playground) or one application. Another application of the same account, or
/// the account key for an application's session (and the other way round), is a different project and
/// sees no such session. `VideoSessions.get(id:project:)` is that rule; every server route and every
/// client token goes through it.
public struct VideoSession: Sendable, Equatable {
    public var id: String
    /// The project that created the session: the api key or application id, also embedded in the id.
    public var owner: String
    public var apiKey: String
    public var mediaMode: String
    /// `always`: archived whenever clients are connected, with this name and resolution; else `manual`.
    public var archiveMode: String
    public var archiveName: String?
    public var archiveResolution: String?
    public var location: String?
    public var createdAt: Date
}

public final class VideoSessions: Sendable {
    let db: any SQLStore
    let clock: any WallClock

    init(db: any SQLStore, clock: any WallClock) {
        self.db = db
        self.clock = clock
    }

    /// `"1_" + base64url("1~<owner>~<location>~<created ms>~<random>~P~~")`: SDKs decode it and look for the key.
    public func create(owner: String, apiKey: String, mediaMode: String = "routed", archiveMode: String = "manual", archiveName: String? = nil,
                       archiveResolution: String? = nil, location: String? = nil) throws -> VideoSession {
        let now = clock.now()
        let raw = "1~\(owner)~\(location ?? "")~\(now.millis)~\(SecureRandom.hex(12))~P~~"
        let s = VideoSession(id: "1_" + Base64URL.encode(raw), owner: owner, apiKey: apiKey, mediaMode: mediaMode,
                             archiveMode: archiveMode, archiveName: archiveName, archiveResolution: archiveResolution, location: location, createdAt: now)
        try db.execute("""
            INSERT INTO video_sessions (id, owner, api_key, media_mode, archive_mode, archive_name, archive_resolution, location, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(s.id), .text(owner), .text(apiKey), .text(mediaMode), .text(archiveMode), SQLValue(archiveName), SQLValue(archiveResolution),
                  SQLValue(location), .int(now.millis)])
        return s
    }

    /// The session if it belongs to `project` (an api key or an application id); nil when it does not
    /// exist or belongs to another project, so callers cannot tell the two apart.
    public func get(id: String, project: String) throws -> VideoSession? {
        guard let s = try get(id: id), s.owner == project else { return nil }
        return s
    }

    /// The session whoever owns it; callers that act for a project use `get(id:project:)`.
    public func get(id: String) throws -> VideoSession? {
        try db.queryOne("SELECT * FROM video_sessions WHERE id = ?", [.text(id)]).map { r in
            VideoSession(id: r.string("id") ?? "", owner: r.string("owner") ?? "", apiKey: r.string("api_key") ?? "",
                         mediaMode: r.string("media_mode") ?? "routed", archiveMode: r.string("archive_mode") ?? "manual",
                         archiveName: r.string("archive_name"), archiveResolution: r.string("archive_resolution"), location: r.string("location"), createdAt: Date(millis: r.int64("created_at") ?? 0))
        }
    }
}

extension VideoSessions {
    /// The api key or application id inside a session id, or nil when it is not in the `1_…` shape.
    public static func owner(ofSessionID id: String) -> String? {
        guard id.hasPrefix("1_"), let raw = Base64URL.decode(String(id.dropFirst(2))) else { return nil }
        let fields = String(decoding: raw, as: UTF8.self).split(separator: "~", omittingEmptySubsequences: false)
        return fields.count > 1 && !fields[1].isEmpty ? String(fields[1]) : nil
    }
}
