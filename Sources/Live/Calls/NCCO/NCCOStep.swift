import Foundation
import Platform
import Wire

/// What the NCCO engine asks its owner to do; the owner runs steps in order and reports back.
public enum NCCOStep: Sendable, Equatable {
    /// Media the leg needs (`CallMedia`); the owner reports `mediaFinished` or `mediaFailed`.
    case media(CallMediaCommand)
    /// Stops whatever the leg is playing (barge-in, a replaced NCCO).
    case stopMedia
    /// Puts the leg into the application's conversation of this name.
    case joinConversation(NCCOAction.Conversation)
    /// Dials an endpoint for `connect`; the owner reports `dialAnswered`, `dialFailed`, then `bridgeEnded`.
    case dial(NCCOAction.Connect)
    /// A webhook whose answer may be an NCCO; nil callback means the leg's event URL. When `awaitsAnswer`,
    /// the owner reports `callbackAnswered` with the reply.
    case request(NCCOAction.Callback?, payload: [String: JSONValue], awaitsAnswer: Bool)
    /// An error event for the event URL: what was wrong, and with which action.
    case error(String, code: String)
    /// Ends the leg.
    case hangup
}
