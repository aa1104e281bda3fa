/// What Live needs from the clients' side: pushing a message to one connection, and whether a user
/// still has one. The API layer implements it over the realtime gateway; tests with a recorder.
///
/// Calls are made from Live's tasks and worker callbacks: implementations only hand the message on.
/// A push to a connection that has gone is dropped.
public protocol Clients: AnyObject, Sendable {
    /// A push to a room member's connection (renegotiation offers).
    func send(_ push: RoomPush, to client: ClientID)
    /// A push to a video session participant's connection.
    func send(_ push: VideoPush, to client: ClientID)
    /// Whether the user has a connected realtime session now (decides leave-after-grace).
    func isConnected(userID: String) -> Bool
}
