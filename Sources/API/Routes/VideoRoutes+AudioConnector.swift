import Audio
import Crypto
import Foundation
import Live
import Platform
import Runtime
import Synchronization
import Wire

/// The Audio Connector: `POST /v2/project/{id}/connect` opens a WebSocket to the project's server and
/// streams a video session's audio to it, mixed, as 20 ms binary messages of 16-bit little-endian PCM at
/// 16 or 8 kHz, after a first text message of `{"content-type": "audio/l16;rate=…", …headers}`. The
/// connector is a connection of the session (others see it arrive and leave with the token's data); a
/// force disconnect of that connection, or the far end closing the socket, ends it. A bidirectional one
/// takes the same messages back and publishes them as an audio stream of its connection.
extension VideoRoutes {
    /// The request body, checked whole before anything is opened.
    struct AudioConnectorRequest: Equatable {
        var sessionID: String
        var token: String
        var uri: String
        /// nil: every stream of the session, later ones too.
        var streams: [String]?
        var headers: [String: JSONValue]
        var rate: SampleRate
        var bidirectional = false
        var framing = WebSocketLine.Framing.binary

        /// The Video API's bound on `headers` (their JSON), and this server's on the JSON transport's static fields.
        static let headersLimit = 512
        static let staticFieldsLimit = 1024

        init(_ body: JSONValue) throws(APIError) {
            guard let sessionID = body["sessionId"]?.stringValue, !sessionID.isEmpty else {
                throw .badRequest("sessionId is required.")
            }
            guard let token = body["token"]?.stringValue, !token.isEmpty else { throw .badRequest("token is required.") }
            guard let ws = body["websocket"]?.objectValue else { throw .badRequest("websocket must be an object with a uri.") }
            guard let uri = ws["uri"]?.stringValue, let u = URLComponents(string: uri), ["ws", "wss"].contains(u.scheme?.lowercased() ?? ""),
                  u.host?.isEmpty == false else {
                throw .badRequest("websocket.uri must be a ws:// or wss:// URI.")
            }
            self.sessionID = sessionID
            self.token = token
            self.uri = uri
            streams = try ws["streams"].map { list throws(APIError) in try VideoRoutes.streamList(list, field: "websocket.streams") }
            headers = [:]
            if let h = ws["headers"] {
                guard let fields = h.objectValue, fields.values.allSatisfy(Self.isScalar),
                      WebSocketLine.openingMessage(fields).utf8.count <= Self.headersLimit else {
                    throw .badRequest("websocket.headers must be an object of strings, numbers or booleans, at most \(Self.headersLimit) bytes as JSON.")
                }
                headers = fields
            }
            switch ws["audioRate"] {
            case nil, .number(16000)?: rate = .hz16000
            case .number(8000)?: rate = .hz8000
            default: throw .badRequest("websocket.audioRate must be 8000 or 16000.")
            }
            switch ws["bidirectional"] {
            case nil: break
            case .bool(let on)?: bidirectional = on
            default: throw .badRequest("websocket.bidirectional must be a boolean.")
            }
            // The `opentok` SDK sends it as a JSON string, the `vonage` one as an object; both name its fields in snake case.
            if let transport = ws["audioTransport"] {
                let fields = transport.objectValue ?? transport.stringValue.flatMap { try? JSONParser.parse($0) }?.objectValue
                guard let fields else { throw .badRequest("websocket.audioTransport must be an object.") }
                framing = try Self.framing(fields)
            }
        }

        /// `audioTransport`: `{transport: binary}`, or `{transport: json, encoding: base64, audio_field?,
        /// receive_audio_field?, static_fields?}` (camel case accepted too).
        static func framing(_ fields: [String: JSONValue]) throws(APIError) -> WebSocketLine.Framing {
            func field(_ snake: String, _ camel: String) -> JSONValue? { fields[snake] ?? fields[camel] }
            switch fields["transport"] {
            case nil, .string("binary")?:
                return .binary
            case .string("json")?:
                guard fields["encoding"] == .string("base64") else {
                    throw .badRequest("websocket.audioTransport.encoding must be base64 with the json transport.")
                }
                let names = [field("audio_field", "audioField"), field("receive_audio_field", "receiveAudioField")]
                guard names.allSatisfy({ $0 == nil || $0?.stringValue?.isEmpty == false }) else {
                    throw .badRequest("websocket.audioTransport.audio_field and receive_audio_field must be non-empty strings.")
                }
                let audio = names[0]?.stringValue ?? "audio"
                let statics = field("static_fields", "staticFields")
                guard statics == nil || statics?.objectValue != nil else {
                    throw .badRequest("websocket.audioTransport.static_fields must be an object.")
                }
                let constant = statics?.objectValue ?? [:]
                guard constant[audio] == nil, WebSocketLine.openingMessage(constant).utf8.count <= staticFieldsLimit else {
                    throw .badRequest("websocket.audioTransport.static_fields must not hold the audio field and be at most \(staticFieldsLimit) bytes as JSON.")
                }
                return .json(field: audio, receiveField: names[1]?.stringValue ?? audio, staticFields: constant)
            default:
                throw .badRequest("websocket.audioTransport.transport must be binary or json.")
            }
        }

        var contentType: String { "audio/l16;rate=\(rate.rawValue)" }

        static func isScalar(_ value: JSONValue) -> Bool {
            switch value {
            case .string, .number, .bool: true
            case .null, .array, .object: false
            }
        }
    }

    /// Connectors whose socket is open, for `/metrics`.
    static let openConnectors = Atomic<Int>(0)

    func registerAudioConnector(on router: inout Router) {
        let (core, hub, group) = (self.core, self.hub, self.group)
        Metrics.shared.gauge("switchboard_video_audio_connectors", help: "Audio Connectors streaming a video session's audio.") {
            Double(Self.openConnectors.load(ordering: .relaxed))
        }
        router.post("/v2/project/:pid/connect") { req in
            let (_, project) = try Self.projectCredentials(req, core: core, project: req.parameter("pid"))
            let ask = try AudioConnectorRequest(try req.json())
            let grant = try Self.serverConnectionGrant(core: core, hub: hub, project: project, sessionID: ask.sessionID, token: ask.token,
                                                       streams: ask.streams, unknownSession: .badRequest("sessionId is not a session of this project."),
                                                       relayed: "Only routed sessions can connect their audio to a WebSocket.")
            let connection = try await Self.openAudioConnector(ask, grant: grant, hub: hub, group: group)
            var reply: [String: Any] = ["id": UUID4.generate(), "connectionId": connection.id]
            if ask.bidirectional { reply["bidirectional"] = true }
            return .jsonObject(reply)
        }
    }

    /// A connection of the server's own (an Audio Connector, a SIP call, an Experience Composer) joins one of the
    /// project's routed sessions: `token`'s grant, which must let it hear the session (or, `publishing`, publish in
    /// it) and whose `streams` must be there.
    static func serverConnectionGrant(core: PlatformCore, hub: VideoHub, project: String, sessionID: String, token: String, streams: [String]?,
                                      publishing: Bool = false, unknownSession: APIError, relayed: String) throws -> VideoGrant {
        guard let session = try core.videoSessions.get(id: sessionID, project: project) else { throw unknownSession }
        guard session.mediaMode == "routed" else { throw APIError.conflict(relayed, code: "session-not-routed") }
        do {
            return try hub.serverConnectionGrant(sessionID: session.id, token: token, streams: streams, publishing: publishing)
        } catch let refused as LiveError {
            throw connectorRefusal(refused)
        }
    }

    /// `streams`: 1 to 50 stream ids, duplicates dropped, in order.
    static func streamList(_ list: JSONValue, field: String) throws(APIError) -> [String] {
        let limit = VideoHub.Limits.audioConnectorStreams
        let ids = list.arrayValue?.compactMap(\.stringValue).filter { !$0.isEmpty } ?? []
        guard let all = list.arrayValue, ids.count == all.count, (1...limit).contains(Set(ids).count) else {
            throw .badRequest("\(field) must be a list of 1 to \(limit) stream ids.")
        }
        return ids.reduce(into: []) { kept, id in if !kept.contains(id) { kept.append(id) } }
    }

    /// The 400 for a connector's token or streams.
    static func connectorRefusal(_ refused: LiveError) -> APIError {
        switch refused {
        case .tokenExpired: .badRequest("token has expired.", code: "invalid-token")
        case .invalidToken(let why): .badRequest("token is not valid: \(why)", code: "invalid-token")
        case .sessionNotFound: .badRequest("token is not signed by the session's project.", code: "invalid-token")
        case .notAllowedToSubscribe: .badRequest("token's role may not subscribe, so it cannot hear the session.", code: "invalid-token")
        case .notAllowedToPublish(let role): .badRequest("token's role (\(role.rawValue)) may not publish.", code: "invalid-token")
        case .streamNotFound: .badRequest("websocket.streams names a stream that is not in the session.")
        default: .badRequest("\(refused)")
        }
    }

    /// Opens the socket (6 s, as the Video API allows), says what it carries, and joins the session's mix.
    static func openAudioConnector(_ ask: AudioConnectorRequest, grant: VideoGrant, hub: VideoHub,
                                   group: EventLoopGroup) async throws -> VideoHub.Connection {
        let end = ConnectorEnd()
        let holder = WebSocketLine.Holder()
        var callbacks = WebSocketCallbacks()
        let framing = ask.framing
        if ask.bidirectional {
            if framing == .binary { callbacks.onBinary = { _, bytes in holder.received(bytes) } }
            callbacks.onText = { _, text in holder.received(text: text, framing: framing) }
        }
        callbacks.onClose = { _, _, _ in
            if let joined = end.closed() {
                openConnectors.subtract(1, ordering: .relaxed)
                hub.disconnect(sessionID: joined.sessionID, connectionID: joined.id, reason: .clientDisconnected)
            }
        }
        let socket: WebSocket
        do {
            socket = try await WebSocketClient.connect(url: ask.uri, group: group, timeout: .seconds(6), callbacks: callbacks)
        } catch {
            throw APIError.badRequest("Could not open the WebSocket at \(ask.uri): \(error)", code: "websocket-failed")
        }
        var opening = ask.headers
        opening["content-type"] = .string(ask.contentType)
        socket.send(text: WebSocketLine.openingMessage(opening))
        let rate = ask.rate
        let joined: VideoHub.Connection
        do {
            joined = try await hub.connectAudio(client: ClientID(rawValue: socket.id), grant: grant, streams: ask.streams,
                                                bidirectional: ask.bidirectional) { loop in
                let line = try WebSocketLine(loop: loop, rate: rate, socket: socket, closesSocket: true, framing: framing)
                holder.line.withLock { $0 = line }
                return line
            }.connection
        } catch {
            socket.close(code: 1011, reason: "no mix")
            switch error {
            case .notConnected: throw APIError.badRequest("The WebSocket at \(ask.uri) closed while the connector started.", code: "websocket-failed")
            default: throw APIError.unavailable("The session's audio could not be mixed: \(error)")
            }
        }
        // The far end may have closed the socket while the connection joined.
        openConnectors.add(1, ordering: .relaxed)
        if end.joined(joined) {
            openConnectors.subtract(1, ordering: .relaxed)
            hub.disconnect(sessionID: joined.sessionID, connectionID: joined.id, reason: .clientDisconnected)
        }
        return joined
    }

    /// The connector's connection once it has joined, and whether its socket closed first.
    private final class ConnectorEnd: Sendable {
        private let state = Mutex<(connection: VideoHub.Connection?, closed: Bool)>((nil, false))

        /// The socket closed: the connection to disconnect, if it has joined.
        func closed() -> VideoHub.Connection? {
            state.withLock { s in
                s.closed = true
                return s.connection
            }
        }

        /// The connection joined; true if the socket had already closed.
        func joined(_ connection: VideoHub.Connection) -> Bool {
            state.withLock { s in
                s.connection = connection
                return s.closed
            }
        }
    }
}
