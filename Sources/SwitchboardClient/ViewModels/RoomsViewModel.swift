import Foundation
import Observation

/// The rooms app's screens as state: log in through the app server, list and create rooms,
/// join one with media, see who is in it and who speaks, mute, leave. UI code observes it.
@Observable
@MainActor
public final class RoomsViewModel {
    public struct Participant: Sendable, Hashable, Identifiable {
        public var id: String
        public var name: String
        public var speaking = false
        public var muted = false
    }

    public let server: URL
    public let app: RoomsAppServer
    public private(set) var userName: String?
    public private(set) var rooms: [RoomsAppServer.Room] = []
    public private(set) var currentRoom: String?
    public private(set) var participants: [Participant] = []
    public private(set) var muted = false
    public private(set) var error: SessionError?
    @ObservationIgnored private var session: Session?
    @ObservationIgnored private var media: RoomMedia?
    @ObservationIgnored private var listener: Task<Void, Never>?

    public init(server: URL, app: URL? = nil) {
        self.server = server
        self.app = RoomsAppServer(url: app ?? server.appendingPathComponent("rooms/api"))
    }

    public func logIn(name: String) async {
        await attempt {
            let login = try await app.logIn(name: name)
            var options = Session.Options()
            let app = self.app
            options.tokenProvider = { try await app.logIn(name: name).token }
            session = try await Session.connect(to: server, token: login.token, options: options)
            userName = login.name
            try await loadRooms()
        }
    }

    public func loadRooms() async throws(SessionError) { rooms = try await app.rooms() }

    public func createRoom(named title: String) async {
        await attempt {
            let id = try await app.createRoom(displayName: title)
            try await loadRooms()
            try await join(id, source: nil, sink: nil)
        }
    }

    /// Joins a room with media: `source` is what this user says, `sink` what it hears.
    public func join(_ roomID: String, source: AudioSource?, sink: AudioSink?) async throws(SessionError) {
        guard let session else { throw .closed }
        let events = session.events()
        media = try await session.enableMedia(in: roomID, source: source, sink: sink)
        currentRoom = roomID
        muted = false
        let page = try await session.conversations.members(in: roomID)
        participants = page.items.filter { $0.state == .joined }.map { Participant(id: $0.id, name: $0.userName ?? $0.id, muted: $0.muted) }
        listener = Task { [weak self] in
            for await e in events where e.conversationID == roomID { self?.apply(e) }
        }
    }

    func apply(_ e: ConversationEvent) {
        guard let member = e.memberID else { return }
        let index = participants.firstIndex { $0.id == member }
        switch e.kind {
        case .memberJoined where index == nil: participants.append(Participant(id: member, name: e.userName ?? member))
        case .memberLeft: participants.removeAll { $0.id == member }
        case .speakingOn: if let index { participants[index].speaking = true }
        case .speakingOff: if let index { participants[index].speaking = false }
        case .muteOn: if let index { participants[index].muted = true }
        case .muteOff: if let index { participants[index].muted = false }
        case .memberMedia:
            // Also a mute set by the room's application (a moderator): the server has stopped forwarding already.
            guard let muted = e.muted else { break }
            if let index { participants[index].muted = muted }
            if member == media?.memberID { self.muted = muted }
        default: break
        }
    }

    public func setMuted(_ muted: Bool) async {
        await attempt {
            try await media?.setMuted(muted)
            self.muted = muted
        }
    }

    public func leave() async {
        listener?.cancel()
        await media?.disable()
        if let currentRoom { try? await session?.conversations.leave(currentRoom) }
        media = nil
        currentRoom = nil
        participants = []
    }

    public func logOut() async {
        await leave()
        await session?.logout()
        session = nil
        userName = nil
    }

    private func attempt(_ body: () async throws -> Void) async {
        do {
            error = nil
            try await body()
        } catch let e as SessionError {
            error = e
        } catch {
            self.error = .server(code: "failed", detail: String(describing: error))
        }
    }
}
