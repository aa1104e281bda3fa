import Foundation
import Wire

/// One leg of a voice call (the Voice API's "call", identified by `uuid`): a member of a conversation with a
/// phone, sip, app or websocket channel.
public struct CallLeg: Sendable, Equatable {
    public var uuid: String
    public var applicationID: String
    public var conversationID: String
    public var memberID: String
    /// The leg whose `connect` action dialled this one.
    public var parentUUID: String?
    public var direction: CallDirection
    public var from: CallEndpoint
    public var to: CallEndpoint
    public var status: CallStatus
    public var network: String?
    /// Seconds a leg may ring before it times out.
    public var ringingTimer: Int
    /// Seconds an answered leg may last.
    public var lengthTimer: Int
    public var startTime: Date
    public var answeredAt: Date?
    public var endTime: Date?
    var seq: Int64 = 0

    /// Whole seconds between answer and end (0 for legs never answered).
    public var duration: Int? {
        guard let endTime else { return nil }
        guard let answeredAt else { return 0 }
        return max(0, Int((endTime.timeIntervalSince(answeredAt)).rounded()))
    }

    /// The channel object of the leg's conversation member.
    public var channel: JSONValue {
        ["type": .string(channelType.rawValue), "leg_id": .string(uuid), "from": from.shown, "to": to.shown]
    }

    /// The channel type is that of the far end: the callee of an outbound leg, the caller of an inbound one.
    public var channelType: CallEndpoint.Kind { direction == .outbound ? to.kind : from.kind }

    /// The call object of `GET /v1/calls/{uuid}`.
    public func json(base: String) -> JSONValue {
        var o: [String: JSONValue] = [
            "uuid": .string(uuid), "conversation_uuid": .string(conversationID), "status": .string(status.rawValue),
            "direction": .string(direction.rawValue), "to": Self.wire(to), "from": Self.wire(from),
            "rate": "0.00000000", "price": "0.00000000", "start_time": .string(startTime.iso8601),
            "_links": ["self": ["href": .string("\(base)/v1/calls/\(uuid)")]],
        ]
        if let endTime { o["end_time"] = .string(endTime.iso8601) }
        if let duration { o["duration"] = .string(String(duration)) }
        if let network { o["network"] = .string(network) }
        return .object(o)
    }

    /// An endpoint as the call object shows it: `{type, number}`, `{type, uri}`, `{type, user}`.
    static func wire(_ e: CallEndpoint) -> JSONValue {
        switch e {
        case .phone(let n, _, _): ["type": "phone", "number": .string(n)]
        case .sip(let u, _, _): ["type": "sip", "uri": .string(u)]
        case .app(let u): ["type": "app", "user": .string(u)]
        case .websocket(let u, let c, _, _): ["type": "websocket", "uri": .string(u), "content-type": .string(c)]
        }
    }
}
