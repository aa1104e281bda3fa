import Foundation
import Live
import Platform
import Runtime
import Wire

/// `call:*` messages on the realtime gateway (docs/protocol.md, "Voice calls"): a logged-in user places
/// server calls and answers, rejects, hangs up, mutes, sends DTMF on and reconnects to its legs.
struct CallSignaling {
    let calls: Calls

    func register(on gateway: RealtimeGateway) {
        let calls = self.calls
        gateway.handle(prefix: "call:") { context, message in
            do { return try await Self.handle(calls, context, message) } catch let e as CallError { throw e.httpError }
        }
    }

    static func handle(_ calls: Calls, _ context: RealtimeContext, _ message: JSONValue) async throws -> JSONValue? {
        let type = message["type"]?.stringValue ?? ""
        let body = message["body"] ?? .object([:])
        let user = context.user
        if type == "call:create" {
            guard let to = body["to"]?.stringValue, !to.isEmpty, to.count <= 200 else {
                throw APIError.badRequest("body.to is required.", code: "missing-to")
            }
            let leg = try await calls.serverCall(application: context.application, user: user, to: to, customData: body["custom_data"])
            return ["call_id": .string(leg.uuid), "conversation_id": .string(leg.conversationID)]
        }
        guard let uuid = body["call_id"]?.stringValue, !uuid.isEmpty else {
            throw APIError.badRequest("body.call_id is required.", code: "missing-call-id")
        }
        switch type {
        case "call:reconnect":
            let leg = try await calls.reconnect(uuid: uuid, user: user)
            return ["call_id": .string(leg.uuid), "conversation_id": .string(leg.conversationID), "status": .string(leg.status.rawValue)]
        case "call:answer": try await calls.answer(uuid: uuid, user: user)
        case "call:reject": try await calls.reject(uuid: uuid, user: user)
        case "call:hangup": try await calls.hangup(uuid: uuid, user: user)
        case "call:mute":
            guard let muted = body["muted"]?.boolValue else { throw APIError.badRequest("body.muted must be true or false.", code: "missing-muted") }
            try await calls.setMedia(uuid: uuid, user: user, muted: muted, earmuffed: nil)
        case "call:earmuff":
            guard let e = body["earmuffed"]?.boolValue else { throw APIError.badRequest("body.earmuffed must be true or false.", code: "missing-earmuffed") }
            try await calls.setMedia(uuid: uuid, user: user, muted: nil, earmuffed: e)
        case "call:dtmf":
            guard let digits = body["digits"]?.stringValue, !digits.isEmpty, digits.count <= 64,
                  digits.allSatisfy({ "0123456789*#".contains($0) }) else {
                throw APIError.badRequest("body.digits must be 1 to 64 of 0-9, * and #.", code: "invalid-digits")
            }
            try await calls.digits(uuid: uuid, user: user, digits: digits)
        default:
            throw APIError.badRequest("Unknown message type '\(type)'.", code: "unknown-type")
        }
        return .object([:])
    }
}

extension RealtimeClients: CallClients {
    func push(userID: String, type: String, body: JSONValue) {
        gateway?.push(userID: userID, type: type, body: body)
    }
}
