import Foundation
import Testing
import Wire
@testable import API
@testable import Live
@testable import Platform

@Suite("Session monitoring's callbacks")
struct VideoMonitorTests {
    static let grant = VideoGrant(sessionID: "1_s", role: .publisher, connectionData: "name=ann", expiresAt: Date(timeIntervalSince1970: 2_000_000_000),
                                  issuer: "app", initialLayoutClassList: [])
    static let connection = VideoHub.Connection(id: "c1", sessionID: "1_s", client: ClientID(rawValue: 1), grant: grant,
                                                createdAt: Date(timeIntervalSince1970: 1_700_000_000.25))
    static let stream = VideoHub.Stream(id: "s1", connectionID: "c1", name: "cam", hasAudio: true, hasVideo: true, videoType: .screen,
                                        createdAt: Date(timeIntervalSince1970: 1_700_000_001))

    @Test("each event names its webhook and carries the Video API's fields, in order")
    func shapes() {
        let connection: JSONValue = ["id": "c1", "createdAt": 1_700_000_000_250, "data": "name=ann"]
        let cases: [(VideoHub.SessionEvent, String, [String], [String: JSONValue])] = [
            (.sessionCreated(sessionID: "1_s"), "session_created", ["event", "timestamp"], ["event": "sessionCreated"]),
            (.sessionDestroyed(sessionID: "1_s", reason: .clientDisconnected), "session_destroyed", ["event", "reason", "timestamp"],
             ["event": "sessionDestroyed", "reason": "clientDisconnected"]),
            (.connectionCreated(Self.connection), "connection_created", ["event", "timestamp", "connection"],
             ["event": "connectionCreated", "connection": connection]),
            (.connectionDestroyed(Self.connection, reason: .forceDisconnected), "connection_destroyed", ["event", "reason", "timestamp", "connection"],
             ["reason": "forceDisconnected", "connection": connection]),
            (.streamCreated(Self.stream, Self.connection), "stream_created", ["event", "timestamp", "stream"],
             ["stream": ["id": "s1", "createdAt": 1_700_000_001_000, "name": "cam", "videoType": "screen", "connection": connection]]),
            (.streamDestroyed(Self.stream, sessionID: "1_s", nil, reason: .networkDisconnected), "stream_destroyed", ["event", "reason", "timestamp", "stream"],
             ["reason": "networkDisconnected", "stream": ["id": "s1", "createdAt": 1_700_000_001_000, "name": "cam", "videoType": "screen"]]),
        ]
        for (event, name, keys, expected) in cases {
            let (session, webhook, fields) = VideoMonitor.callback(event)
            #expect(session == "1_s" && webhook == name)
            #expect(fields.map(\.0) == keys)
            let values = Dictionary(uniqueKeysWithValues: fields)
            for (key, value) in expected { #expect(values[key] == value, "\(name).\(key)") }
            #expect(values["timestamp"]?.intValue.map { $0 > 1_700_000_000_000 } == true)
        }
    }
}
