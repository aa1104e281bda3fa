import Wire

/// Pushes of in-app voice (call invites, invite cancels, hangups) to every connected session of a user.
/// The API layer implements it over the realtime gateway.
public protocol CallClients: AnyObject, Sendable {
    func push(userID: String, type: String, body: JSONValue)
}
