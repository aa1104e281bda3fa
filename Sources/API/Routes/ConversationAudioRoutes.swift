import Audio
import Foundation
import Live
import Media
import Platform
import Runtime
import Wire

/// Players and recordings in mixed conversations (a Switchboard extension, application JWT):
/// `POST/DELETE /v1/conversations/:cid/say|play|tone`, `POST /v1/conversations/:cid/recordings`,
/// `DELETE /v1/recordings/:id` (stop), `GET /v1/recordings/:id` and `GET /v1/recordings/:id/file`.
struct ConversationAudioRoutes {
    let core: PlatformCore
    let audio: ConversationAudio

    func register(on router: inout Router) {
        let (core, audio) = (core, audio)

        router.post("/v1/conversations/:cid/say") { req in
            let app = try req.requireApplicationToken()
            let cid = try Self.conversation(req, app: app, core: core)
            let body = try req.json()
            guard let text = body["text"]?.stringValue, !text.isEmpty else { throw APIError.badRequest("text is required.", code: "missing-text") }
            var request = SpeechRequest(text: text)
            if let language = body["language"]?.stringValue { request.language = language }
            if let style = body["style"] {
                guard let s = style.intValue else { throw APIError.badRequest("style must be an integer.", code: "invalid-style") }
                request.style = s
            }
            let id = try await Self.start(.speech(request), cid: cid, body: body, audio: audio)
            return .jsonObject(["id": id.rawValue, "conversation_id": cid, "message": "Talk started"], status: 201)
        }
        router.post("/v1/conversations/:cid/play") { req in
            let app = try req.requireApplicationToken()
            let cid = try Self.conversation(req, app: app, core: core)
            let body = try req.json()
            let source: PlayerSource
            if let recording = body["recording_id"] {
                // A finished recording of this application, played back (a voicemail into a conference).
                let info = try await Self.recording(RecordingID(rawValue: recording.stringValue ?? ""), of: app, audio: audio)
                guard let path = await audio.recordings.path(info.id) else {
                    throw APIError.conflict("The recording is not complete.", code: "recording-in-progress")
                }
                source = .file(path)
            } else {
                guard let url = body["url"]?.stringValue ?? body["stream_url"]?[0]?.stringValue ?? body["stream_url"]?.stringValue,
                      url.hasPrefix("http://") || url.hasPrefix("https://") else {
                    throw APIError.badRequest("url must be an http(s) URL (or recording_id a recording).", code: "invalid-url")
                }
                source = .url(url)
            }
            let id = try await Self.start(source, cid: cid, body: body, audio: audio)
            return .jsonObject(["id": id.rawValue, "conversation_id": cid, "message": "Stream started"], status: 201)
        }
        router.post("/v1/conversations/:cid/tone") { req in
            let app = try req.requireApplicationToken()
            let cid = try Self.conversation(req, app: app, core: core)
            let body = try req.json()
            if let d = body["duration_ms"], !(d.intValue.map { (20...600_000).contains($0) } ?? false) {
                throw APIError.badRequest("duration_ms must be an integer of 20 to 600000.", code: "invalid-duration")
            }
            let cadence: ToneCadence
            let ms: Int
            if let country = body["ringback"] {
                // A country's ringback (ISO 3166 alpha-2), repeating for duration_ms (default 6 s).
                guard let c = country.stringValue.flatMap(ToneCadence.ringback(country:)) else {
                    throw APIError.badRequest("ringback must be a country code with a known ringback (US, CA, GB, IE, DE, AT, CH, NL, FR, BE, JP, IT, ES, AU).",
                                              code: "invalid-country")
                }
                (cadence, ms) = (c, body["duration_ms"]?.intValue ?? 6000)
            } else {
                let frequencies = body["frequencies"]?.arrayValue?.compactMap(\.doubleValue) ?? [body["frequency"]?.doubleValue ?? 440]
                guard !frequencies.isEmpty, frequencies.count <= 4, frequencies.allSatisfy({ (20...20_000).contains($0) }) else {
                    throw APIError.badRequest("frequencies must be 1 to 4 values of 20 to 20000 Hz.", code: "invalid-frequency")
                }
                ms = body["duration_ms"]?.intValue ?? 1000
                cadence = ToneCadence([.init(frequencies, milliseconds: ms)], repeats: false)
            }
            let id = try await Self.start(.tone(cadence, milliseconds: ms), cid: cid, body: body, audio: audio)
            return .jsonObject(["id": id.rawValue, "conversation_id": cid, "message": "Tone started"], status: 201)
        }
        for kind in PlayerKind.allCases {
            router.delete("/v1/conversations/:cid/\(kind.rawValue)") { req in
                let app = try req.requireApplicationToken()
                let cid = try Self.conversation(req, app: app, core: core)
                let stopped = await audio.stop(conversationID: cid, kind: kind)
                guard stopped > 0 else { throw APIError.notFound("Nothing of kind \(kind.rawValue) plays in this conversation.", code: "not-playing") }
                return .jsonObject(["conversation_id": cid, "stopped": stopped])
            }
        }
        router.post("/v1/conversations/:cid/recordings") { req in
            let app = try req.requireApplicationToken()
            let cid = try Self.conversation(req, app: app, core: core)
            let options = try Self.recordingOptions(try req.json())
            let info: RecordingInfo
            do throws(ConversationAudio.Failure) { info = try await audio.record(conversationID: cid, applicationID: app.id, options: options) } catch { throw Self.http(error) }
            return .json(Self.render(info, base: req.baseURL), status: 201)
        }
        router.get("/v1/recordings/:rid") { req in
            let info = try await Self.recording(req, audio: audio)
            return .json(Self.render(info, base: req.baseURL))
        }
        router.delete("/v1/recordings/:rid") { req in
            let info = try await Self.recording(req, audio: audio)
            let final = await audio.recordings.stop(info.id) ?? info
            return .json(Self.render(final, base: req.baseURL))
        }
        router.get("/v1/recordings/:rid/file") { req in
            let info = try await Self.recording(req, audio: audio)
            guard info.status == .completed, let path = await audio.recordings.path(info.id), let handle = FileHandle(forReadingAtPath: path) else {
                throw APIError.conflict("The recording is not complete.", code: "recording-in-progress")
            }
            var headers = HTTPHeaders()
            headers["Content-Type"] = info.format.mimeType
            headers["Content-Disposition"] = "attachment; filename=\"\(info.id.rawValue).\(info.format.rawValue)\""
            return HTTPResponse(status: 200, headers: headers) { writer in
                defer { try? handle.close() }
                while let chunk = try handle.read(upToCount: 64 << 10), !chunk.isEmpty { try await writer.write([UInt8](chunk)) }
            }
        }
    }

    /// The conversation, which must belong to the token's application.
    static func conversation(_ req: HTTPRequest, app: Application, core: PlatformCore) throws -> String {
        let cid = req.parameter("cid")
        _ = try core.conversations.get(id: cid, applicationID: app.id)
        return cid
    }

    static func recording(_ req: HTTPRequest, audio: ConversationAudio) async throws -> RecordingInfo {
        try await recording(RecordingID(rawValue: req.parameter("rid")), of: try req.requireApplicationToken(), audio: audio)
    }

    /// The application's recording `id`; any other is not found.
    static func recording(_ id: RecordingID, of app: Application, audio: ConversationAudio) async throws -> RecordingInfo {
        guard id.isWellFormed, let info = await audio.recordings.info(id), info.applicationID == app.id else {
            throw APIError.notFound("No such recording.", code: "recording-not-found")
        }
        return info
    }

    static func start(_ source: PlayerSource, cid: String, body: JSONValue, audio: ConversationAudio) async throws -> PlayerID {
        var options = PlayerOptions()
        if let loop = body["loop"] {
            guard let l = loop.intValue else { throw APIError.badRequest("loop must be an integer.", code: "invalid-loop") }
            options.loop = l
        }
        if let level = body["level"] {
            guard let l = level.doubleValue else { throw APIError.badRequest("level must be a number.", code: "invalid-level") }
            options.level = l
        }
        do throws(ConversationAudio.Failure) { return try await audio.play(source, conversationID: cid, options: options) } catch { throw http(error) }
    }

    static func recordingOptions(_ body: JSONValue) throws -> RecordingOptions {
        var o = RecordingOptions()
        func invalid(_ key: String, _ what: String) -> APIError {
            APIError.badRequest("\(key) must be \(what).", code: "invalid-" + key.replacingOccurrences(of: "_", with: "-"))
        }
        func int(_ key: String) throws -> Int? {
            guard let value = body[key] else { return nil }
            guard let i = value.intValue else { throw invalid(key, "an integer") }
            return i
        }
        func bool(_ key: String) throws -> Bool? {
            guard let value = body[key] else { return nil }
            guard let b = value.boolValue else { throw invalid(key, "true or false") }
            return b
        }
        if let f = body["format"] {
            guard let kind = f.stringValue.flatMap(AudioFileKind.init(rawValue:)) else { throw invalid("format", "wav, mp3 or ogg") }
            o.format = kind
        }
        if let split = body["split"] {
            guard let b = split.boolValue ?? (split.stringValue == "conversation" ? true : nil) else { throw invalid("split", "true, false or \"conversation\"") }
            o.split = b
        }
        if let member = body["participant"] {
            guard let id = member.stringValue, !id.isEmpty else { throw invalid("participant", "a member id") }
            o.participant = MixerParticipantID(id)
        }
        if let c = try int("channels") { o.channels = c }
        o.endOnSilence = try int("end_on_silence")
        if let t = try int("timeout") { o.timeOut = t }
        if let b = try bool("beep_start") { o.beepStart = b }
        return o
    }

    static func http(_ error: ConversationAudio.Failure) -> APIError {
        switch error {
        case .notMixing: return APIError.conflict(error.description, code: "not-mixing")
        case .player(.fetch), .player(.status): return APIError.unprocessable(error.description, code: "fetch-failed")
        case .player(.speech(.unknownLanguage)), .player(.speech(.unknownStyle)): return APIError.unprocessable(error.description, code: "invalid-language")
        case .player(.media), .recording(.media): return APIError.conflict(error.description, code: "mixer-refused")
        case .player, .recording: return APIError.unprocessable(error.description, code: "invalid-audio")
        }
    }

    static func render(_ info: RecordingInfo, base: String) -> JSONValue {
        var o: [String: JSONValue] = [
            "id": .string(info.id.rawValue), "source": .string(info.source), "format": .string(info.format.rawValue),
            "channels": .number(Double(info.channels)), "sample_rate": .number(Double(info.sampleRate)),
            "status": .string(info.status.rawValue), "duration": .number(info.duration), "size": .number(Double(info.size)),
            "dropped_frames": .number(Double(info.droppedFrames)),
            "start_time": .string(ISO8601DateFormatter().string(from: info.startTime)),
            "_links": ["self": ["href": .string("\(base)/v1/recordings/\(info.id.rawValue)")],
                       "file": ["href": .string("\(base)/v1/recordings/\(info.id.rawValue)/file")]],
        ]
        if let end = info.endTime { o["end_time"] = .string(ISO8601DateFormatter().string(from: end)) }
        if let r = info.endReason { o["end_reason"] = .string(r.rawValue) }
        if let e = info.error { o["error"] = .string(e) }
        return .object(o)
    }
}
