import Live
import Runtime
import Synchronization
import Wire

/// Live's clients over the realtime gateway. A `ClientID` is a socket's id; the socket behind it is
/// remembered from its first request to Live until it closes, so Live's pushes find it.
final class RealtimeClients: Clients {
    weak let gateway: RealtimeGateway?
    private let sockets = Mutex<[ClientID: WebSocket]>([:])

    init(gateway: RealtimeGateway) {
        self.gateway = gateway
        // Nothing is worth pushing to a socket that closed, so it is forgotten before Live hears of it.
        gateway.onSocketClosed { [weak self] ws in self?.forget(ws) }
    }

    /// A socket's client id, whether or not it has made a request to Live.
    static func id(_ ws: WebSocket) -> ClientID { ClientID(rawValue: ws.id) }

    /// The client id of a socket a request to Live came from.
    func client(_ ws: WebSocket) -> ClientID {
        let id = Self.id(ws)
        sockets.withLock { s in
            // A socket that has closed meanwhile (its request was already running) is not remembered again.
            if s[id] == nil, gateway?.isOpen(ws) == true { s[id] = ws }
        }
        return id
    }

    private func forget(_ ws: WebSocket) {
        _ = sockets.withLock { $0.removeValue(forKey: Self.id(ws)) }
    }

    private func socket(_ client: ClientID) -> WebSocket? { sockets.withLock { $0[client] } }

    func send(_ push: RoomPush, to client: ClientID) {
        guard let ws = socket(client) else { return }
        let (type, body) = push.message
        // Behind the session's queued events, as replies are.
        gateway?.send(ws, type: type, rid: nil, body: body)
    }

    func send(_ push: VideoPush, to client: ClientID) {
        guard let ws = socket(client) else { return }
        let (type, body) = push.message
        ws.send(text: RealtimeGateway.encode(["type": .string(type), "body": body]))
    }

    func isConnected(userID: String) -> Bool {
        (gateway?.connectedSessionCount(userID: userID) ?? 0) > 0
    }
}

extension RealtimeGateway {
    /// Whether the socket is open (opened and not yet closed).
    func isOpen(_ ws: WebSocket) -> Bool { state.withLock { $0.requests[ws] != nil } }
}
