import Crypto
import Foundation
import Platform
import Runtime
import Wire

/// `switchboard video`: create Video API sessions on a running server, make client tokens, start Audio
/// Connectors and SIP calls, what an app server does with the account or application credentials.
struct VideoCommand {
    static let command = Command(name: "video", summary: "video sessions, client tokens, audio connectors, SIP calls, archives, broadcasts, captions and Experience Composers", usage: usage) { args in
        try await run(args)
    }

    static let usage = """
        Usage: switchboard video session create [--server URL] [--json] [--location IP] [--relayed]
               switchboard video token SESSION_ID [--role ROLE] [--data DATA] [--ttl 1h] [--json]
               switchboard video connect SESSION_ID --uri WS_URI [--streams ID,ID] [--rate 8000|16000]
                                         [--bidirectional] [--headers JSON] [--data DATA] [--json]
               switchboard video dial SESSION_ID --sip-uri SIP_URI [--from USER] [--sip-headers JSON]
                                      [--username U --password P] [--streams ID,ID] [--observe-force-mute] [--secure]
                                      [--data DATA] [--json]
               switchboard video dtmf SESSION_ID DIGITS [--connection ID]
               switchboard video archive start SESSION_ID [--name NAME] [--video [--resolution WxH] | --individual] [--manual]
                                     | stop ARCHIVE_ID
                                     | get ARCHIVE_ID | list [--session SESSION_ID] | delete ARCHIVE_ID | download ARCHIVE_ID --out FILE
                                     | add ARCHIVE_ID STREAM_ID [--no-audio | --no-video] | remove ARCHIVE_ID STREAM_ID
               switchboard video broadcast start SESSION_ID [--hls [--dvr | --low-latency]] [--rtmp URL,URL] [--resolution WxH] [--audio-only]
                                       [--manual] [--max-duration SECONDS] [--tag TAG]
                                     | stop BROADCAST_ID | get BROADCAST_ID | list [--session SESSION_ID]
                                     | add BROADCAST_ID STREAM_ID [--no-audio | --no-video] | remove BROADCAST_ID STREAM_ID
               switchboard video captions start SESSION_ID [--language CODE] [--max-duration SECONDS] [--no-partial]
                                      [--status-url URL] | stop CAPTIONS_ID
               switchboard video render start SESSION_ID --url URL [--resolution WxH] [--max-duration SECONDS] [--name NAME]
                                    | stop RENDER_ID | get RENDER_ID | list

          --server URL       the running server (default $SWITCHBOARD_URL, else http://$SWITCHBOARD_LISTEN,
                             else http://127.0.0.1:8080)
          --data-dir DIR     where account.json lives (default $SWITCHBOARD_DATA, else ./.switchboard)
          --app-id ID        act as this application instead of the account ...
          --key-file FILE    ... signing with its private key (PEM): RS256 tokens and server auth
          --role ROLE        subscriber | publisher (default) | publisheronly | moderator
          --data DATA        connection data the other clients see, e.g. name=alice
          --ttl DURATION     token lifetime: 90s, 30m, 1h, 7d (default 24h; at most 30 days)
          --json             print JSON
          --uri WS_URI       connect: the WebSocket (ws:// or wss://) that gets the session's audio, 20 ms
                             frames of 16-bit PCM; prints the connector's connection id (force-disconnect
                             it to stop)
          --streams ID,ID    connect: only these streams (default every stream, later ones too)
          --rate HZ          connect: 16000 (default) or 8000
          --bidirectional    connect: what the socket sends back is published as an audio stream
          --headers JSON     connect: fields for the socket's first message, e.g. '{"lang":"en-US"}'
          --sip-uri URI      dial: the SIP URI to call into the session (sip: or sips:, ;transport=tcp|tls);
                             its audio becomes a stream, it hears the session; prints the call's connection
                             id (force-disconnect it to hang up)
          --from USER        dial: the From, a user or user@host
          --sip-headers JSON dial: headers for the INVITE, e.g. '{"X-Meeting":"m-1"}'
          --username U, --password P   dial: digest credentials if the far end challenges
          --observe-force-mute         dial: moderation's force mute silences the call (default: it does not)
          --secure                     dial: SRTP media with SDES keys, required of the far end (needs sips: or ;transport=tls)
          --connection ID    dtmf: only this SIP call (default every SIP call in the session)
          archive            archives of a session: its mix (AAC in MP4); with --video every stream laid out with the
                             mix (H.264 and AAC in MP4); with --individual each stream's video and audio in a WebM file of its own
                             (a ZIP); start prints the archive id,
                             stop/get/list print JSON, download writes the file to --out
          --resolution WxH   archive start --video, broadcast start: 640x480 (default), 1280x720, 1920x1080 or portrait 480x640,
                             720x1280, 1080x1920
          --manual           archive/broadcast start: only the streams chosen with add (its audio and video, or
                             without --no-audio / --no-video), until remove leaves one out
          broadcast          live streams of a session, laid out as a composed archive (H.264 and AAC): to an HLS
                             playlist this server serves (--hls; --dvr keeps two hours; --low-latency lists
                             half-second parts as they are made, for low-latency HLS players) and/or RTMP servers
                             (--rtmp rtmp://host/app/STREAM_NAME, up to five, comma-separated); start prints the
                             broadcast id and the playlist's URL; stop/get/list print JSON
          --audio-only       broadcast start: the session's mix without pictures
          --max-duration S   broadcast start: stop after S seconds (60 to 36000; default 14400)
          --tag TAG          broadcast start: a multiBroadcastTag, so several broadcasts of a session can run at once
          captions           live captions of a session: the streams whose publishers ask for captions are transcribed
                             as they speak, for the clients that ask for them; start prints the captions id
          --language CODE    captions start: en-US (default) or another English code
          --max-duration S   captions start: stop after S seconds (300 to 14400; default 14400)
          --no-partial       captions start: final captions only (no partial ones while words are said)
          --status-url URL   captions start: where each status (started, stopped, failed) is POSTed
          render             Experience Composers: the web page at --url rendered by the server's headless Chromium and
                             published into the session as a stream (picture and sound) with a fresh publisher token;
                             start prints the render's id, stop/get/list print JSON (--resolution as for archives,
                             default 1280x720; --max-duration 60 to 36000, default 7200; --name the stream's name)

        Without --app-id the session is created with X-OPENTOK-AUTH and the token is an OpenTok
        T1 token, both from the account's api key and secret in DIR/account.json.
        """

    static func run(_ argv: [String]) async throws -> Int32 {
        let args = try Arguments(argv, booleanFlags: ["--json", "--help", "-h", "--relayed", "--bidirectional", "--observe-force-mute", "--secure", "--individual", "--video",
                                                         "--manual", "--no-audio", "--no-video", "--hls", "--dvr", "--low-latency", "--audio-only",
                                                         "--no-partial"])
        if args.flag("--help") || args.flag("-h") || args.positionals.isEmpty {
            print(usage)
            return args.positionals.isEmpty && !(args.flag("--help") || args.flag("-h")) ? 2 : 0
        }
        switch (args.positionals.first, args.positionals.dropFirst().first) {
        case ("session", "create"):
            try args.check(known: ["--server", "--data-dir", "--app-id", "--key-file", "--json", "--location", "--relayed"])
            return try await createSession(args)
        case ("token", let sessionID?):
            try args.check(known: ["--data-dir", "--app-id", "--key-file", "--role", "--data", "--ttl", "--json"])
            return try makeToken(sessionID: sessionID, args)
        case ("connect", let sessionID?):
            try args.check(known: ["--server", "--data-dir", "--app-id", "--key-file", "--json", "--uri", "--streams", "--rate",
                                   "--bidirectional", "--headers", "--data"])
            return try await connect(sessionID: sessionID, args)
        case ("dial", let sessionID?):
            try args.check(known: ["--server", "--data-dir", "--app-id", "--key-file", "--json", "--sip-uri", "--from", "--sip-headers",
                                   "--username", "--password", "--streams", "--observe-force-mute", "--secure", "--data"])
            return try await dial(sessionID: sessionID, args)
        case ("archive", let action?):
            try args.check(known: ["--server", "--data-dir", "--app-id", "--key-file", "--name", "--session", "--out", "--individual", "--video",
                                   "--resolution", "--manual", "--no-audio", "--no-video"])
            return try await archive(action, target: args.positionals.dropFirst(2).first, stream: args.positionals.dropFirst(3).first, args)
        case ("broadcast", let action?):
            try args.check(known: ["--server", "--data-dir", "--app-id", "--key-file", "--session", "--hls", "--dvr", "--low-latency", "--rtmp", "--resolution",
                                   "--audio-only", "--manual", "--max-duration", "--tag", "--no-audio", "--no-video"])
            return try await broadcast(action, target: args.positionals.dropFirst(2).first, stream: args.positionals.dropFirst(3).first, args)
        case ("captions", let action?):
            try args.check(known: ["--server", "--data-dir", "--app-id", "--key-file", "--language", "--max-duration", "--no-partial", "--status-url"])
            return try await captions(action, target: args.positionals.dropFirst(2).first, args)
        case ("render", let action?):
            try args.check(known: ["--server", "--data-dir", "--app-id", "--key-file", "--url", "--resolution", "--max-duration", "--name"])
            return try await render(action, target: args.positionals.dropFirst(2).first, args)
        case ("dtmf", let sessionID?):
            try args.check(known: ["--server", "--data-dir", "--app-id", "--key-file", "--connection"])
            guard let digits = args.positionals.dropFirst(2).first else { throw CLIError("dtmf needs DIGITS, e.g. 1234#") }
            return try await dtmf(sessionID: sessionID, digits: digits, args)
        default:
            throw CLIError("expected 'video session create', 'video token SESSION_ID', 'video connect SESSION_ID', 'video dial SESSION_ID', 'video dtmf SESSION_ID DIGITS', 'video archive ACTION', 'video broadcast ACTION', 'video captions ACTION' or 'video render ACTION' (see switchboard help video)")
        }
    }

    enum Credentials {
        case account(key: String, secret: String)
        case application(id: String, key: RSAPrivateKey)

        /// The project the credentials act for: the api key or the application id.
        var project: String {
            switch self {
            case .account(let key, _): key
            case .application(let id, _): id
            }
        }
    }

    static func credentials(_ args: Arguments) throws -> Credentials {
        if let appID = args["--app-id"] {
            guard let path = args["--key-file"] else { throw CLIError("--app-id needs --key-file") }
            guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else { throw CLIError("cannot read \(path)") }
            do { return .application(id: appID, key: try RSAPrivateKey(pem: pem)) } catch {
                throw CLIError("\(path): not an RSA private key (\(error))")
            }
        }
        let env = ProcessInfo.processInfo.environment
        let dir = args["--data-dir"] ?? env["SWITCHBOARD_DATA"].flatMap { $0.isEmpty ? nil : $0 } ?? "./.switchboard"
        let file = dir + "/account.json"
        guard let data = FileManager.default.contents(atPath: file),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let key = object["api_key"] as? String, let secret = object["api_secret"] as? String else {
            throw CLIError("no account in \(file): start the server once with --data \(dir), or pass --data-dir")
        }
        return .account(key: key, secret: secret)
    }

    /// The running server's base URL (`--server`, the environment, or the default).
    static func server(_ args: Arguments) throws -> String {
        let env = ProcessInfo.processInfo.environment
        let server = (args["--server"] ?? env["SWITCHBOARD_URL"] ?? env["SWITCHBOARD_LISTEN"].map { "http://" + $0 } ?? "http://127.0.0.1:8080")
            .trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        guard server.hasPrefix("http://") else { throw CLIError("--server: only http:// URLs are supported here") }
        return server
    }

    /// Server credentials for the Video REST API: X-OPENTOK-AUTH from the account, or an application's Bearer JWT.
    static func authorize(_ headers: inout HTTPHeaders, _ creds: Credentials) throws {
        let now = Int(Date().timeIntervalSince1970)
        switch creds {
        case .account(let key, let secret):
            let claims: [String: JSONValue] = ["iss": .string(key), "ist": "project", "iat": .number(Double(now)),
                                               "exp": .number(Double(now + 180)), "jti": .string(UUID4.generate())]
            headers["x-opentok-auth"] = try JWT.sign(claims: claims, key: .hs256(Array(secret.utf8)))
        case .application(let id, let privateKey):
            let claims: [String: JSONValue] = ["application_id": .string(id), "iat": .number(Double(now)),
                                               "exp": .number(Double(now + 300)), "jti": .string(UUID4.generate())]
            headers["authorization"] = "Bearer " + (try JWT.sign(claims: claims, key: .rs256(privateKey)))
        }
    }

    /// A JSON request's headers with the server credentials.
    static func jsonHeaders(_ creds: Credentials) throws -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers["content-type"] = "application/json"
        try authorize(&headers, creds)
        return headers
    }

    /// One request to the server; connection failures name the server.
    static func send(_ request: HTTPClientRequest, server: String, maxBytes: Int = 16 << 20, timeout: Duration = .seconds(10)) async throws -> HTTPClientResponse {
        let group = EventLoopGroup(threads: 1, name: "video-cli")
        defer { group.shutdown() }
        var client = HTTPClient(group: group)
        client.maxResponseBytes = maxBytes
        do {
            return try await client.execute(request, timeout: timeout)
        } catch {
            throw CLIError("cannot reach \(server): \(error)")
        }
    }

    static func createSession(_ args: Arguments) async throws -> Int32 {
        let creds = try credentials(args)
        let server = try server(args)
        var headers = HTTPHeaders()
        headers["content-type"] = "application/x-www-form-urlencoded"
        headers["accept"] = "application/json"
        try authorize(&headers, creds)
        var form = "p2p.preference=" + (args.flag("--relayed") ? "enabled" : "disabled")
        if let location = args["--location"] { form += "&location=" + (location.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") }

        let response = try await send(HTTPClientRequest(method: .POST, url: server + "/session/create", headers: headers,
                                                        body: Array(form.utf8)), server: server)
        guard response.status == 200, let list = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [[String: Any]],
              let first = list.first, let sessionID = first["session_id"] as? String else {
            throw CLIError("session create failed: HTTP \(response.status) \(response.text)")
        }
        if args.flag("--json") {
            let out: [String: Any] = ["session_id": sessionID, "project_id": first["project_id"] ?? "", "create_dt": first["create_dt"] ?? ""]
            print(String(decoding: try JSONSerialization.data(withJSONObject: out, options: [.sortedKeys]), as: UTF8.self))
        } else {
            print(sessionID)
        }
        return 0
    }

    static func makeToken(sessionID: String, _ args: Arguments) throws -> Int32 {
        let roleName = args["--role"] ?? "publisher"
        guard let role = VideoGrant.Role(rawValue: roleName) else {
            throw CLIError("--role: expected one of \(VideoGrant.Role.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let ttl = try parseDuration(args["--ttl"] ?? "24h")
        guard ttl >= 1, ttl <= VideoTokenVerifier.maxLifetime else { throw CLIError("--ttl: 1 s to 30 days") }
        let now = Date()
        let token = try clientToken(sessionID: sessionID, role: role, data: args["--data"], ttl: ttl, now: now, creds: try credentials(args))
        if args.flag("--json") {
            let out: [String: Any] = ["token": token, "session_id": sessionID, "role": role.rawValue,
                                      "expires_at": Int(now.timeIntervalSince1970 + ttl)]
            print(String(decoding: try JSONSerialization.data(withJSONObject: out, options: [.sortedKeys]), as: UTF8.self))
        } else {
            print(token)
        }
        return 0
    }

    /// A client token for a session of the signer's own project.
    static func clientToken(sessionID: String, role: VideoGrant.Role, data: String?, ttl: TimeInterval, now: Date,
                            creds: Credentials) throws -> String {
        if let data, data.utf8.count > 1000 { throw CLIError("--data: at most 1000 bytes") }
        let token: String
        switch creds {
        case .account(let key, let secret):
            if let embedded = VideoSessions.owner(ofSessionID: sessionID), embedded != key {
                throw CLIError("the session belongs to project \(embedded), not to this account (\(key))")
            }
            token = VideoTokenVerifier.makeT1(apiKey: key, apiSecret: secret, sessionID: sessionID, role: role, data: data, ttl: ttl, now: now)
        case .application(let id, let privateKey):
            if let embedded = VideoSessions.owner(ofSessionID: sessionID), embedded != id {
                throw CLIError("the session belongs to project \(embedded), not to this application (\(id))")
            }
            let iat = Int(now.timeIntervalSince1970)
            var claims: [String: JSONValue] = [
                "application_id": .string(id), "iat": .number(Double(iat)), "exp": .number(Double(iat + Int(ttl))),
                "jti": .string(UUID4.generate()), "session_id": .string(sessionID), "role": .string(role.rawValue),
                "scope": "session.connect", "sub": "video", "initial_layout_class_list": .array([]),
                "acl": ["paths": ["/session/**": .object([:])]],
            ]
            if let data { claims["connection_data"] = .string(data) }
            token = try JWT.sign(claims: claims, key: .rs256(privateKey))
        }
        return token
    }

    /// `video connect`: starts an Audio Connector with a fresh subscriber token; prints its connection id.
    static func connect(sessionID: String, _ args: Arguments) async throws -> Int32 {
        guard let uri = args["--uri"] else { throw CLIError("connect needs --uri ws://… or wss://…") }
        let creds = try credentials(args)
        let server = try server(args)
        let token = try clientToken(sessionID: sessionID, role: .subscriber, data: args["--data"], ttl: 3600, now: Date(), creds: creds)
        var websocket: [String: JSONValue] = ["uri": .string(uri)]
        if let streams = args["--streams"] {
            websocket["streams"] = .array(streams.split(separator: ",").map { .string(String($0)) })
        }
        if let rate = args["--rate"] {
            guard let hz = Int(rate) else { throw CLIError("--rate: 8000 or 16000") }
            websocket["audioRate"] = .number(Double(hz))
        }
        if args.flag("--bidirectional") { websocket["bidirectional"] = true }
        if let headers = args["--headers"] {
            guard case .object(let fields)? = try? JSONParser.parse(headers) else { throw CLIError("--headers: expected a JSON object") }
            websocket["headers"] = .object(fields)
        }
        let body: JSONValue = ["sessionId": .string(sessionID), "token": .string(token), "websocket": .object(websocket)]
        return try await startConnection("connect", body: body, creds: creds, server: server, json: args.flag("--json"))
    }

    /// `video dial`: calls a SIP URI into the session with a fresh publisher token; prints its connection id.
    static func dial(sessionID: String, _ args: Arguments) async throws -> Int32 {
        guard let uri = args["--sip-uri"] else { throw CLIError("dial needs --sip-uri sip:…") }
        let creds = try credentials(args)
        let server = try server(args)
        let token = try clientToken(sessionID: sessionID, role: .publisher, data: args["--data"], ttl: 3600, now: Date(), creds: creds)
        var sip: [String: JSONValue] = ["uri": .string(uri)]
        if let from = args["--from"] { sip["from"] = .string(from) }
        if let headers = args["--sip-headers"] {
            guard case .object(let fields)? = try? JSONParser.parse(headers) else { throw CLIError("--sip-headers: expected a JSON object") }
            sip["headers"] = .object(fields)
        }
        switch (args["--username"], args["--password"]) {
        case (let user?, let password?): sip["auth"] = ["username": .string(user), "password": .string(password)]
        case (nil, nil): break
        default: throw CLIError("--username and --password go together")
        }
        if let streams = args["--streams"] { sip["streams"] = .array(streams.split(separator: ",").map { .string(String($0)) }) }
        if args.flag("--observe-force-mute") { sip["observeForceMute"] = true }
        if args.flag("--secure") { sip["secure"] = true }
        let body: JSONValue = ["sessionId": .string(sessionID), "token": .string(token), "sip": .object(sip)]
        return try await startConnection("dial", body: body, creds: creds, server: server, json: args.flag("--json"))
    }

    /// POSTs `/v2/project/{id}/<path>` (an Audio Connector or a SIP call); prints the new connection's id, or the reply.
    static func startConnection(_ path: String, body: JSONValue, creds: Credentials, server: String, json: Bool) async throws -> Int32 {
        let http = try jsonHeaders(creds)
        let response = try await send(HTTPClientRequest(method: .POST, url: server + "/v2/project/\(creds.project)/\(path)", headers: http,
                                                        body: Array(try JSONEncoder().encode(body))), server: server)
        guard response.status == 200, case .object(let reply)? = try? JSONParser.parse(response.body),
              let connection = reply["connectionId"]?.stringValue else {
            throw CLIError("\(path) failed: HTTP \(response.status) \(response.text)")
        }
        print(json ? response.text : connection)
        return 0
    }

    /// `video dtmf`: keys to the session's SIP calls, or to one.
    static func dtmf(sessionID: String, digits: String, _ args: Arguments) async throws -> Int32 {
        let creds = try credentials(args)
        let server = try server(args)
        let http = try jsonHeaders(creds)
        let target = args["--connection"].map { "/connection/\($0)" } ?? ""
        let body: JSONValue = ["digits": .string(digits)]
        let response = try await send(HTTPClientRequest(method: .POST, url: server + "/v2/project/\(creds.project)/session/\(sessionID)\(target)/play-dtmf",
                                                        headers: http, body: Array(try JSONEncoder().encode(body))), server: server)
        guard response.status == 200 else { throw CLIError("dtmf failed: HTTP \(response.status) \(response.text)") }
        return 0
    }

    /// `video archive …`: the archive REST routes with the project's credentials.
    static func archive(_ action: String, target: String?, stream: String?, _ args: Arguments) async throws -> Int32 {
        try await manage("archive", action, target: target, stream: stream, args) { session in
            var body: [String: JSONValue] = ["sessionId": .string(session), "hasVideo": .bool(args.flag("--individual") || args.flag("--video"))]
            if args.flag("--individual") { body["outputMode"] = "individual" }
            if let name = args["--name"] { body["name"] = .string(name) }
            return body
        }
    }

    /// `video broadcast …`: the broadcast REST routes with the project's credentials.
    static func broadcast(_ action: String, target: String?, stream: String?, _ args: Arguments) async throws -> Int32 {
        try await manage("broadcast", action, target: target, stream: stream, args) { session in
            var outputs: [String: JSONValue] = [:]
            if args.flag("--hls") || args.flag("--dvr") || args.flag("--low-latency") {
                outputs["hls"] = .object(["dvr": .bool(args.flag("--dvr")), "lowLatency": .bool(args.flag("--low-latency"))])
            }
            if let list = args["--rtmp"] {
                outputs["rtmp"] = .array(try list.split(separator: ",").map { url in
                    // rtmp://host/app/stream: the server's address, then the stream's name.
                    guard let slash = url.lastIndex(of: "/"), url.hasPrefix("rtmp"), url.distance(from: url.startIndex, to: slash) > 8 else {
                        throw CLIError("--rtmp: expected rtmp://host/app/STREAM_NAME (or rtmps://)")
                    }
                    return .object(["serverUrl": .string(String(url[..<slash])), "streamName": .string(String(url[url.index(after: slash)...]))])
                })
            }
            guard !outputs.isEmpty else { throw CLIError("broadcast start needs --hls, --rtmp URL or both") }
            var body: [String: JSONValue] = ["sessionId": .string(session), "outputs": .object(outputs), "hasVideo": .bool(!args.flag("--audio-only"))]
            if let seconds = args["--max-duration"] {
                guard let value = Int(seconds) else { throw CLIError("--max-duration: a number of seconds") }
                body["maxDuration"] = .number(Double(value))
            }
            if let tag = args["--tag"] { body["multiBroadcastTag"] = .string(tag) }
            return body
        }
    }

    /// `video captions start SESSION_ID | stop CAPTIONS_ID`: live captions, started with a fresh moderator token.
    static func captions(_ action: String, target: String?, _ args: Arguments) async throws -> Int32 {
        guard let target else { throw CLIError("captions \(action) needs \(action == "start" ? "a SESSION_ID" : "a CAPTIONS_ID")") }
        let creds = try credentials(args)
        let server = try server(args)
        let base = server + "/v2/project/\(creds.project)/captions"
        let request: HTTPClientRequest
        switch action {
        case "start":
            let token = try clientToken(sessionID: target, role: .moderator, data: nil, ttl: 3600, now: Date(), creds: creds)
            var body: [String: JSONValue] = ["sessionId": .string(target), "token": .string(token), "partialCaptions": .bool(!args.flag("--no-partial"))]
            if let code = args["--language"] { body["languageCode"] = .string(code) }
            if let url = args["--status-url"] { body["statusCallbackUrl"] = .string(url) }
            if let seconds = args["--max-duration"] {
                guard let value = Int(seconds) else { throw CLIError("--max-duration: a number of seconds") }
                body["maxDuration"] = .number(Double(value))
            }
            request = HTTPClientRequest(method: .POST, url: base, headers: try jsonHeaders(creds), body: Array(try JSONEncoder().encode(JSONValue.object(body))))
        case "stop":
            request = HTTPClientRequest(method: .POST, url: base + "/\(target)/stop", headers: try jsonHeaders(creds))
        default:
            throw CLIError("captions: expected start or stop")
        }
        let response = try await send(request, server: server)
        guard response.status == 202 else { throw CLIError("captions \(action) failed: HTTP \(response.status) \(response.text)") }
        if action == "start" {
            guard let id = (try? JSONParser.parse(response.body))?["captionsId"]?.stringValue else { throw CLIError("captions start: unexpected reply \(response.text)") }
            print(id)
        }
        return 0
    }

    /// `video render start SESSION_ID --url URL | stop | get RENDER_ID | list`: Experience Composers, started with a fresh
    /// publisher token.
    static func render(_ action: String, target: String?, _ args: Arguments) async throws -> Int32 {
        let creds = try credentials(args)
        let server = try server(args)
        let http = try jsonHeaders(creds)
        let base = server + "/v2/project/\(creds.project)/render"
        func id() throws -> String {
            guard let target else { throw CLIError("render \(action) needs a RENDER_ID") }
            return target
        }
        let request: HTTPClientRequest
        switch action {
        case "start":
            guard let target else { throw CLIError("render start needs a SESSION_ID") }
            guard let url = args["--url"] else { throw CLIError("render start needs --url URL, the page to render") }
            let token = try clientToken(sessionID: target, role: .publisher, data: nil, ttl: 86_400, now: Date(), creds: creds)
            var body: [String: JSONValue] = ["sessionId": .string(target), "token": .string(token), "url": .string(url)]
            if let resolution = args["--resolution"] { body["resolution"] = .string(resolution) }
            if let name = args["--name"] { body["properties"] = ["name": .string(name)] }
            if let seconds = args["--max-duration"] {
                guard let value = Int(seconds) else { throw CLIError("--max-duration: a number of seconds") }
                body["maxDuration"] = .number(Double(value))
            }
            request = HTTPClientRequest(method: .POST, url: base, headers: http, body: Array(try JSONEncoder().encode(JSONValue.object(body))))
        case "stop": request = HTTPClientRequest(method: .DELETE, url: base + "/\(try id())", headers: http)
        case "get": request = HTTPClientRequest(method: .GET, url: base + "/\(try id())", headers: http)
        case "list": request = HTTPClientRequest(method: .GET, url: base, headers: http)
        default: throw CLIError("render: expected start, stop, get or list")
        }
        let response = try await send(request, server: server)
        guard (200...299).contains(response.status) else { throw CLIError("render \(action) failed: HTTP \(response.status) \(response.text)") }
        switch action {
        case "start":
            guard let id = (try? JSONParser.parse(response.body))?["id"]?.stringValue else { throw CLIError("render start: unexpected reply \(response.text)") }
            print(id)
        case "stop": break
        default: print(response.text)
        }
        return 0
    }

    /// The routes archives and broadcasts share — start (the body `start` makes for the session, with
    /// `--manual` and `--resolution`), stop, get, list, add, remove — and an archive's delete and download.
    static func manage(_ kind: String, _ action: String, target: String?, stream: String?, _ args: Arguments,
                       start: (String) throws -> [String: JSONValue]) async throws -> Int32 {
        let creds = try credentials(args)
        let server = try server(args)
        let http = try jsonHeaders(creds)
        let base = server + "/v2/project/\(creds.project)/\(kind)"
        func id() throws -> String {
            guard let target else { throw CLIError("\(kind) \(action) needs an id") }
            return target
        }
        let request: HTTPClientRequest
        switch action {
        case "start":
            guard let target else { throw CLIError("\(kind) start needs a SESSION_ID") }
            var body = try start(target)
            if args.flag("--manual") { body["streamMode"] = "manual" }
            if let resolution = args["--resolution"] { body["resolution"] = .string(resolution) }
            request = HTTPClientRequest(method: .POST, url: base, headers: http, body: Array(try JSONEncoder().encode(JSONValue.object(body))))
        case "stop": request = HTTPClientRequest(method: .POST, url: base + "/\(try id())/stop", headers: http)
        case "get": request = HTTPClientRequest(method: .GET, url: base + "/\(try id())", headers: http)
        case "delete" where kind == "archive": request = HTTPClientRequest(method: .DELETE, url: base + "/\(try id())", headers: http)
        case "download" where kind == "archive":
            guard args["--out"] != nil else { throw CLIError("archive download needs --out FILE") }
            request = HTTPClientRequest(method: .GET, url: base + "/\(try id())/download", headers: http)
        case "add", "remove":
            guard let stream else { throw CLIError("\(kind) \(action) needs \(kind.uppercased())_ID STREAM_ID") }
            let body: JSONValue = action == "add"
                ? .object(["addStream": .string(stream), "hasAudio": .bool(!args.flag("--no-audio")), "hasVideo": .bool(!args.flag("--no-video"))])
                : .object(["removeStream": .string(stream)])
            request = HTTPClientRequest(method: .PATCH, url: base + "/\(try id())/streams", headers: http, body: Array(try JSONEncoder().encode(body)))
        case "list":
            let query = args["--session"].map { "?sessionId=" + ($0.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? $0) } ?? ""
            request = HTTPClientRequest(method: .GET, url: base + query, headers: http)
        default:
            throw CLIError(kind == "archive" ? "archive: expected start, stop, get, list, delete, download, add or remove"
                                             : "broadcast: expected start, stop, get, list, add or remove")
        }
        // An archive's file, held in memory here: at most 256 MB (some 30 minutes of 640 × 480).
        let download = action == "download"
        let response = try await send(request, server: server, maxBytes: download ? 256 << 20 : 16 << 20, timeout: .seconds(download ? 300 : 10))
        guard (200...299).contains(response.status) else { throw CLIError("\(kind) \(action) failed: HTTP \(response.status) \(response.text)") }
        switch action {
        case "start":
            guard case .object(let reply)? = try? JSONParser.parse(response.body), let id = reply["id"]?.stringValue else {
                throw CLIError("\(kind) start: unexpected reply \(response.text)")
            }
            print(id)
            // A broadcast's HLS playlist, for players.
            if let hls = reply["broadcastUrls"]?["hls"]?.stringValue { print(hls) }
        case "download":
            let out = args["--out"] ?? ""
            guard FileManager.default.createFile(atPath: out, contents: Data(response.body)) else { throw CLIError("cannot write \(out)") }
        case "delete", "add", "remove": break
        default: print(response.text)
        }
        return 0
    }

    /// `90`, `90s`, `30m`, `1h`, `7d` → seconds.
    static func parseDuration(_ text: String) throws -> TimeInterval {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var number = Substring(text)
        var scale = 1.0
        if let last = text.last, let u = units[last] {
            number = number.dropLast()
            scale = u
        }
        guard let value = Double(number), value > 0 else { throw CLIError("--ttl: expected a duration like 90s, 30m, 1h or 7d") }
        return value * scale
    }
}
