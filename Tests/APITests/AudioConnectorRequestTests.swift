import Audio
import Runtime
import Testing
import Wire
@testable import API

@Suite("Audio Connector request bodies")
struct AudioConnectorRequestTests {
    typealias Request = VideoRoutes.AudioConnectorRequest

    static func body(_ websocket: JSONValue) -> JSONValue {
        ["sessionId": "1_session", "token": "T1==token", "websocket": websocket]
    }

    @Test("the defaults: every stream, 16 kHz, no headers")
    func defaults() throws {
        let r = try Request(Self.body(["uri": "wss://media.example/ws?x=1"]))
        #expect(r.sessionID == "1_session" && r.token == "T1==token" && r.uri == "wss://media.example/ws?x=1")
        #expect(r.streams == nil && r.headers.isEmpty && r.rate == .hz16000)
        #expect(r.contentType == "audio/l16;rate=16000")
    }

    @Test("both SDKs' shapes: a stream list (duplicates once), 8 kHz, headers, bidirectional, the binary transport as a string or an object")
    func sdkShapes() throws {
        let opentok = try Request(Self.body([
            "uri": "ws://127.0.0.1:9000/", "streams": ["s1", "s2", "s1"], "headers": ["lang": "en", "n": 7, "on": true],
            "audioRate": 8000, "bidirectional": false, "audioTransport": #"{"transport":"binary"}"#,
        ]))
        #expect(opentok.streams == ["s1", "s2"])
        #expect(opentok.headers == ["lang": "en", "n": 7, "on": true])
        #expect(opentok.rate == .hz8000 && opentok.contentType == "audio/l16;rate=8000")
        #expect(!opentok.bidirectional)
        let vonage = try Request(Self.body(["uri": "ws://127.0.0.1:9000/", "audioRate": 16000, "bidirectional": true,
                                            "audioTransport": ["transport": "binary"]]))
        #expect(vonage.rate == .hz16000 && vonage.bidirectional)
    }

    @Test("every bad field is a 400 that names it", arguments: [
        (["token": "t", "websocket": ["uri": "ws://h/"]], "sessionId"),
        (["sessionId": "s", "websocket": ["uri": "ws://h/"]], "token"),
        (["sessionId": "s", "token": "t"], "websocket must"),
        (body(["uri": "https://h/"]), "websocket.uri"),
        (body(["uri": "ws:///nohost"]), "websocket.uri"),
        (body(["uri": "ws://h/", "streams": []]), "websocket.streams"),
        (body(["uri": "ws://h/", "streams": ["a", 3]]), "websocket.streams"),
        (body(["uri": "ws://h/", "streams": .array((0...50).map { .string("s\($0)") })]), "websocket.streams"),
        (body(["uri": "ws://h/", "headers": ["a": ["nested": true]]]), "websocket.headers"),
        (body(["uri": "ws://h/", "headers": ["a": .string(String(repeating: "x", count: 520))]]), "websocket.headers"),
        (body(["uri": "ws://h/", "audioRate": 24000]), "websocket.audioRate"),
        (body(["uri": "ws://h/", "audioRate": "16000"]), "websocket.audioRate"),
        (body(["uri": "ws://h/", "bidirectional": "yes"]), "websocket.bidirectional"),
        (body(["uri": "ws://h/", "audioTransport": ["transport": "json"]]), "encoding must be base64"),
        (body(["uri": "ws://h/", "audioTransport": ["transport": "xml"]]), "binary or json"),
        (body(["uri": "ws://h/", "audioTransport": ["transport": "json", "encoding": "base64", "audio_field": ""]]), "non-empty"),
        (body(["uri": "ws://h/", "audioTransport": ["transport": "json", "encoding": "base64", "static_fields": ["audio": 1]]]),
         "must not hold the audio field"),
        (body(["uri": "ws://h/", "audioTransport": ["transport": "json", "encoding": "base64", "static_fields": "x"]]), "static_fields"),
        (body(["uri": "ws://h/", "audioTransport": "not json"]), "websocket.audioTransport"),
    ] as [(JSONValue, String)])
    func refusals(body: JSONValue, names: String) {
        do {
            _ = try Request(body)
            Issue.record("accepted \(body)")
        } catch {
            #expect(error.status == 400 && error.detail.contains(names), "\(error.detail)")
        }
    }

    @Test("the JSON transport: base64 audio under the named field beside the static fields, and the far end's field read back")
    func jsonTransport() throws {
        let r = try Request(Self.body(["uri": "ws://h/", "bidirectional": true, "audioTransport": #"{"transport":"json","encoding":"base64","audio_field":"payload","receive_audio_field":"reply","static_fields":{"kind":"pcm","n":2}}"#]))
        let framing = WebSocketLine.Framing.json(field: "payload", receiveField: "reply", staticFields: ["kind": "pcm", "n": 2])
        #expect(r.framing == framing)
        let (head, tail) = framing.envelope
        let message = head + "AQID" + tail
        #expect(try JSONParser.parse(message) == ["payload": "AQID", "kind": "pcm", "n": 2])
        #expect(framing.audio(inText: #"{"reply":"AQID","seq":4}"#) == [1, 2, 3])
        #expect(framing.audio(inText: #"{"payload":"AQID"}"#) == nil)
        #expect(framing.audio(inText: "not json") == nil)
        let plain = WebSocketLine.Framing.json(field: "a\"b", receiveField: "a\"b", staticFields: [:]).envelope
        #expect(try JSONParser.parse(plain.head + "AA==" + plain.tail) == ["a\"b": "AA=="])
        #expect(try Request(Self.body(["uri": "ws://h/", "audioTransport": ["transport": "json", "encoding": "base64"]])).framing
            == .json(field: "audio", receiveField: "audio", staticFields: [:]))
    }
}
