import Audio
import Foundation
import Media
import Runtime
import Synchronization
import Telephony
import Wire

/// A `websocket` leg's audio as a mixer participant: 16-bit little-endian linear PCM (`audio/l16`) at
/// 8, 16 or 24 kHz in 20 ms binary messages both ways, as the Voice API's WebSocket endpoint does. What the
/// socket sends waits in a playout buffer (`PlayoutBuffer`: sent faster than real time, a whole reply at
/// once, it is still heard whole and in order) and the frame a tick takes goes to the mixer at its rate
/// (`LineResampling`); what the participant hears each tick goes out as one message (silence included, a
/// steady 20 ms stream).
///
/// The socket's text messages are the endpoint's commands (`Command`): `{"action": "clear"}` empties the
/// buffer and is answered `{"event": "websocket:cleared"}`; `{"action": "notify", "payload": …}` is
/// answered `{"event": "websocket:notify", "payload": …}` once the audio sent before it has played. Keys
/// pressed by the leg the socket is connected to reach it as `{"event": "websocket:dtmf", "digit", "duration"}`.
///
/// Lives on the mixer's worker loop like `PhoneLine`; the socket's callbacks run on an HTTP loop and
/// post each message here (`received`). Each outgoing message is one small array the socket keeps until
/// it is written: 50 a second per leg, off the RTP path. A line that `closesSocket` (a video session's
/// audio connector) closes its socket when it leaves the mix; a call's leg closes its own on hangup. The
/// Audio Connector's JSON transport carries the same frames base64-encoded in text messages (`Framing`).
final class WebSocketLine: MixerPort, SpeechListeningLine, @unchecked Sendable {
    unowned let loop: EventLoop
    let rate: SampleRate
    let socket: WebSocket
    let closesSocket: Bool
    let framing: Framing
    /// A JSON message around its base64 audio (`Framing.json`).
    private let jsonHead: String
    private let jsonTail: String
    private let resampling: LineResampling
    private var said: AudioFrame
    private var queued: AudioFrame
    private var silence: AudioFrame
    private var outgoing: AudioFrame
    private var playout: PlayoutBuffer<JSONValue>
    private var speech = LineSpeech()
    private(set) var malformed = 0

    init(loop: EventLoop, rate: SampleRate, socket: WebSocket, closesSocket: Bool = false, framing: Framing = .binary) throws {
        self.loop = loop
        self.rate = rate
        self.socket = socket
        self.closesSocket = closesSocket
        self.framing = framing
        (jsonHead, jsonTail) = framing.envelope
        resampling = try LineResampling(rate: rate)
        said = AudioFrame(rate: rate)
        queued = AudioFrame(rate: rate)
        silence = AudioFrame(rate: rate)
        outgoing = AudioFrame(rate: rate)
        playout = PlayoutBuffer(rate: rate)
    }

    /// One binary message from the socket (on the loop): exactly 20 ms of L16 at the leg's rate.
    func received(_ bytes: [UInt8]) {
        let n = said.count
        guard bytes.count == 2 * n else {
            malformed += 1
            WebSocketLine.Counters.malformed.add(1, ordering: .relaxed)
            return
        }
        said.withMutableSamples { d in
            for i in 0..<n { d[i] = Int16(bitPattern: UInt16(bytes[2 * i]) | UInt16(bytes[2 * i + 1]) << 8) }
        }
        if !said.withSamples({ playout.push($0) }) { WebSocketLine.Counters.overflow.add(1, ordering: .relaxed) }
    }

    /// One command from the socket (on the loop).
    func perform(_ command: Command) {
        switch command {
        case .clear:
            playout.clear()
            socket.send(text: Self.json(.object(["event": "websocket:cleared"])))
        case .notify(let payload):
            if !playout.mark(payload) { WebSocketLine.Counters.notifiesDropped.add(1, ordering: .relaxed) }
        }
    }

    /// Keys pressed by the leg the socket is connected to, one event each (on the loop).
    func sendKeys(_ digits: String) {
        for d in digits where d != "p" {
            socket.send(text: Self.json(.object(["event": "websocket:dtmf", "digit": .string(String(d)),
                                                 "duration": .number(Double(KeyPacing.keyMilliseconds))])))
        }
    }

    func pull(into frame: inout AudioFrame, now: UInt64) -> Bool {
        let socket = self.socket
        let pulled = playout.pull(into: &queued) { payload in
            socket.send(text: Self.json(.object(["event": "websocket:notify", "payload": payload])))
        }
        if speech.active { speech.feed(pulled ? queued : silence) }
        return pulled && resampling.toMixer(queued, into: &frame)
    }

    /// From now on, listens for one utterance in what the socket sends; see `PhoneLine.listenForSpeech`.
    func listenForSpeech(_ settings: SpeechEndpointer.Settings, onStart: (() -> Void)?,
                         report: @escaping (SpeechEndpointer.Ending, [Int16], Int) -> Void) {
        speech.listen(rate: rate, settings, onStart: onStart, report: report)
    }

    func stopListeningForSpeech() { speech.stop() }

    func deliver(_ heard: AudioFrame?, now: UInt64) {
        if let heard, resampling.fromMixer(heard, into: &outgoing) {} else { outgoing.clear() }
        var bytes = [UInt8](repeating: 0, count: 2 * outgoing.count)
        outgoing.withSamples { s in
            for i in 0..<s.count {
                let v = UInt16(bitPattern: s[i])
                bytes[2 * i] = UInt8(v & 0xFF)
                bytes[2 * i + 1] = UInt8(v >> 8)
            }
        }
        switch framing {
        case .binary: socket.send(binary: bytes)
        case .json: socket.send(text: jsonHead + Data(bytes).base64EncodedString() + jsonTail)
        }
    }

    /// The first text message, which says what the socket carries: `fields` as one JSON object, keys sorted.
    static func openingMessage(_ fields: [String: JSONValue]) -> String { json(.object(fields)) }

    /// `value` as JSON text, object keys sorted.
    static func json(_ value: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    /// How the audio travels: binary messages, or JSON text messages holding it in base64, `{"<field>": "…"}` plus
    /// `staticFields`, the far end's in `receiveField`.
    enum Framing: Sendable, Equatable {
        case binary
        case json(field: String, receiveField: String, staticFields: [String: JSONValue])

        /// The text before and after the base64 of an outgoing JSON message.
        var envelope: (head: String, tail: String) {
            guard case .json(let field, _, let fields) = self else { return ("", "") }
            let rest = fields.isEmpty ? "}" : "," + WebSocketLine.openingMessage(fields).dropFirst()
            return ("{" + WebSocketLine.json(.string(field)) + ":\"", "\"" + rest)
        }

        /// The audio of an incoming JSON text message; nil when it has none (other messages are not audio).
        func audio(inText text: String) -> [UInt8]? {
            guard case .json(_, let field, _) = self, let value = try? JSONParser.parse(text),
                  let encoded = value[field]?.stringValue, let data = Data(base64Encoded: encoded) else { return nil }
            return Array(data)
        }
    }

    /// Process-wide counts of what WebSocket lines could not take, for `/metrics`; a relaxed add each, rare.
    enum Counters {
        /// Audio messages that were not 20 ms at the line's rate.
        static let malformed = Atomic<Int>(0)
        /// Frames that came while the playout buffer held its most (a far end more than a minute ahead).
        static let overflow = Atomic<Int>(0)
        /// `notify` commands that came while the most marks waited.
        static let notifiesDropped = Atomic<Int>(0)

        static func render() -> String {
            var out = "# HELP switchboard_websocket_audio_dropped_total Audio messages WebSocket lines dropped: not 20 ms at the line's rate (malformed), or more than a minute ahead of playout (overflow).\n"
            out += "# TYPE switchboard_websocket_audio_dropped_total counter\n"
            out += "switchboard_websocket_audio_dropped_total{reason=\"malformed\"} \(malformed.load(ordering: .relaxed))\n"
            out += "switchboard_websocket_audio_dropped_total{reason=\"overflow\"} \(overflow.load(ordering: .relaxed))\n"
            out += "# HELP switchboard_websocket_notify_dropped_total notify commands WebSocket lines dropped (too many waiting).\n"
            out += "# TYPE switchboard_websocket_notify_dropped_total counter\nswitchboard_websocket_notify_dropped_total \(notifiesDropped.load(ordering: .relaxed))\n"
            return out
        }
    }

    /// What a text message from the socket asks of the line: `{"action": "clear"}` or
    /// `{"action": "notify", "payload": …}` (no payload: `{}`). Nil for anything else, which is ignored.
    enum Command: Sendable, Equatable {
        case clear
        case notify(JSONValue)

        init?(text: String) {
            guard let value = try? JSONParser.parse(text), let action = value["action"]?.stringValue else { return nil }
            switch action {
            case "clear": self = .clear
            case "notify": self = .notify(value["payload"] ?? .object([:]))
            default: return nil
            }
        }
    }

    /// Where a socket's messages go once its line exists (the line is made later, on the mixer's worker).
    final class Holder: Sendable {
        let line = Mutex<WebSocketLine?>(nil)

        /// One message's audio, posted to the line's loop; dropped while there is no line yet.
        func received(_ bytes: [UInt8]) {
            guard let target = line.withLock({ $0 }) else { return }
            target.loop.execute { target.received(bytes) }
        }

        /// A text message: audio in `framing`'s JSON transport, else a command (`Command`), posted to the
        /// line's loop; anything else is ignored.
        func received(text: String, framing: Framing) {
            if let bytes = framing.audio(inText: text) { return received(bytes) }
            guard let command = Command(text: text), let target = line.withLock({ $0 }) else { return }
            target.loop.execute { target.perform(command) }
        }
    }

    func close() {
        if closesSocket { socket.close(code: 1000, reason: "disconnected") }
    }
}
