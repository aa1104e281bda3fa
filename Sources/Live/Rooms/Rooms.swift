import Foundation
import Media
import Platform
import Runtime
import Synchronization
import Wire

/// Audio in conversations: each conversation with media has one router; each member's
/// realtime socket publishes its microphone on one transport and receives every other
/// member's audio on one subscribe transport that is renegotiated as members come and go
/// (the server always offers, so there is no glare). Signaling is `rtc:*` on the realtime
/// gateway (docs/protocol.md, "Media (rtc:*)"), translated by the API layer; this type holds the
/// state, applies the policy (capacity, loudest-N, speaking, earmuff/mute, leave grace), talks to
/// the engine and records what happened in the conversation's store.
///
/// Work on a room is serialized by a per-room lock (engine calls suspend, and two
/// renegotiations of one subscriber must not interleave); rooms proceed independently.
public actor Rooms {
    let engine: MediaEngine
    let conversations: Conversations
    let settings: RoomSettings
    let logger = Logger(label: "rooms")
    /// Where offers are pushed, and who is still connected; the API layer's realtime gateway.
    let clients: any Clients
    /// Peers and transports, readable without the actor (metrics, tests).
    let peerCounts = Mutex<(peers: Int, transports: Int)>((0, 0))

    /// One member's media over one client connection.
    final class Peer {
        let conversationID: String
        let memberID: String
        let userID: String
        let userName: String
        let client: ClientID
        var publication: (transport: TransportID, producer: ProducerID)?
        var subscription: MediaEngine.Subscription?
        /// The client asked to receive (`rtc:subscribe`).
        var subscribing = false
        var awaitingAnswer = false
        /// Something changed while an offer was out: offer again after the answer.
        var dirty = false
        /// The room switched between forwarding and mixing: the next offer puts every new stream on
        /// a new m-line rather than on one its old streams left.
        var freshLines = false
        var muted = false
        var earmuffed = false
        var paused: [ConsumerID: Bool] = [:]
        var speaking = false
        var lastLoud: ContinuousClock.Instant?
        /// Smoothed loudness, for choosing the loudest speakers.
        var score: Double = 0

        init(conversationID: String, memberID: String, userID: String, userName: String, client: ClientID) {
            self.conversationID = conversationID
            self.memberID = memberID
            self.userID = userID
            self.userName = userName
            self.client = client
        }
    }

    final class Room {
        let conversationID: String
        let applicationID: String
        var router: RouterID?
        var peers: [ClientID: Peer] = [:]
        /// With `forwardAllBelow` or more peers: the producers every listener receives.
        var forwarded: Set<ProducerID> = []
        /// In mixed mode: the room's mixer and the producer carrying the mix.
        var mixer: MediaEngine.MixerInfo?
        /// Members whose audio is not WebRTC (phone legs), by member id: mixer participants fed by ports.
        var lines: [String: MixerParticipantID] = [:]
        /// What members of the conversation's calls hear and who hears them, by member id (`MemberMix`).
        var mixes: [String: MemberMix] = [:]
        /// Members muted or earmuffed (`member:media`), by member id: added to their mixer options.
        var silenced: [String: (muted: Bool, earmuffed: Bool)] = [:]
        /// The conversation's own `room_mode` / `room_mix_above` (its properties), read when the room
        /// starts and again when the conversation is updated.
        var setting = RoomModeSetting()
        var busy = false
        var waiters: [CheckedContinuation<Void, Never>] = []

        init(conversationID: String, applicationID: String) {
            self.conversationID = conversationID
            self.applicationID = applicationID
        }

        func peer(producer: ProducerID) -> Peer? { peers.values.first { $0.publication?.producer == producer } }

        var publishers: Int { peers.values.filter { $0.publication != nil || $0.subscribing }.count }
    }

    var rooms: [String: Room] = [:]
    /// Conversations whose calls need the mix (a talk, a stream, a recording), with when it was asked:
    /// their rooms mix whatever their size. Forgotten when the room closes, or after an hour unused.
    var mixRequired: [String: ContinuousClock.Instant] = [:]
    var roomsByRouter: [RouterID: String] = [:]
    /// Members whose connection closed, with the number of their latest close: only the grace timer of the
    /// latest close may mark a member left, so an older timer cannot fire into a brief second disconnect.
    var pendingLeaves: [String: UInt64] = [:]
    var closes: UInt64 = 0

    public init(engine: MediaEngine, conversations: Conversations, settings: RoomSettings, clients: any Clients) {
        self.engine = engine
        self.conversations = conversations
        self.settings = settings
        self.clients = clients
    }

    /// Sockets with media and the transports they hold, readable without the actor (metrics).
    public nonisolated var counts: (peers: Int, transports: Int) { peerCounts.withLock { $0 } }

    // MARK: Room lock

    private func room(_ conversationID: String, applicationID: String) -> Room {
        if let room = rooms[conversationID] { return room }
        let room = Room(conversationID: conversationID, applicationID: applicationID)
        room.setting = storedSetting(conversationID, applicationID: applicationID)
        rooms[conversationID] = room
        return room
    }

    private func lock(_ room: Room) async {
        if room.busy {
            await withCheckedContinuation { room.waiters.append($0) }
        } else {
            room.busy = true
        }
    }

    /// Hands the lock to the next waiter, or frees the room (and forgets it when empty: no member's media, no
    /// call leg's mix waiting for its client).
    private func unlock(_ room: Room) {
        if !room.waiters.isEmpty {
            room.waiters.removeFirst().resume()
            return
        }
        room.busy = false
        if room.peers.isEmpty, room.lines.isEmpty, room.mixes.isEmpty, room.router == nil, rooms[room.conversationID] === room {
            rooms.removeValue(forKey: room.conversationID)
        }
    }

    private func updateCounts() {
        var peers = 0
        var transports = 0
        for room in rooms.values {
            for peer in room.peers.values {
                peers += 1
                if peer.publication != nil { transports += 1 }
                if peer.subscription != nil { transports += 1 }
            }
        }
        peerCounts.withLock { $0 = (peers, transports) }
    }

    // MARK: Membership

    /// The caller's joined member of the conversation (which must be in its application).
    private func joinedMember(_ user: User, _ conversationID: String, applicationID: String) throws -> Member {
        _ = try conversations.get(id: conversationID, applicationID: applicationID)
        guard let member = try conversations.member(ofUser: user.id, conversationID: conversationID), member.state == .joined else {
            throw LiveError.notJoined
        }
        return member
    }

    /// `rtc:join`: joins the conversation unless it already has `capacity` joined members
    /// (the same rule as a REST join, checked in the store's transaction).
    public func join(user: User, applicationID: String, conversationID: String) throws -> Member {
        try conversations.addMember(conversationID: conversationID, applicationID: applicationID, user: user, state: .joined,
                                    initiator: ["joined": ["user_id": .string(user.id), "is_system": false]],
                                    capacity: settings.capacity)
    }

    /// The peer for this connection, created if the room has space.
    private func peer(in room: Room, member: Member, user: User, client: ClientID) throws -> Peer {
        if let peer = room.peers[client] { return peer }
        // The same member on another connection (a reload): that one is stale.
        guard room.peers.count < settings.capacity else { throw LiveError.roomFull(capacity: settings.capacity) }
        let peer = Peer(conversationID: room.conversationID, memberID: member.id, userID: user.id, userName: user.name, client: client)
        room.peers[client] = peer
        return peer
    }

    private func ensureRouter(_ room: Room) async throws(LiveError) -> RouterID {
        do {
            return try await engine.findOrCreateRouter(existing: { room.router }, keep: { router in
                if let kept = room.router { return kept }
                room.router = router
                roomsByRouter[router] = room.conversationID
                return router
            })
        } catch { throw .media(error) }
    }

    // MARK: Publishing

    /// What `publish` gives the client: the SDP answer, the microphone's producer and the member.
    public struct Published: Sendable, Hashable {
        public var answer: String
        public var producerID: ProducerID
        public var memberID: String
    }

    /// `rtc:publish`: the member's microphone. Replaces an earlier publication of this connection.
    public func publish(user: User, applicationID: String, client: ClientID, conversationID: String, offer: String) async throws -> Published {
        let member = try joinedMember(user, conversationID, applicationID: applicationID)
        let room = room(conversationID, applicationID: applicationID)
        await lock(room)
        defer { unlock(room) }
        let peer = try peer(in: room, member: member, user: user, client: client)
        // Same member on an older connection (page reload before the old socket closed): drop it.
        for other in room.peers.values where other !== peer && other.memberID == member.id {
            await removePeer(other, from: room)
        }
        if let old = peer.publication {
            peer.publication = nil
            await close(transport: old.transport, in: room)
        }
        let router = try await ensureRouter(room)
        let publication: MediaEngine.Publication
        do {
            publication = try await engine.publish(router: router, offer: offer)
        } catch {
            if peer.subscription == nil && peer.publication == nil && !peer.subscribing { room.peers[client] = nil }
            // A refused first offer must not leave the room's new router behind.
            await closeRouterIfEmpty(room)
            throw LiveError.media(error)
        }
        guard let audio = publication.producers.first(where: { $0.parameters.kind == .audio }) else {
            await close(transport: publication.transport, in: room)
            throw LiveError.noAudio
        }
        peer.publication = (publication.transport, audio.id)
        peer.muted = false
        updateCounts()
        if let mixer = room.mixer {
            do {
                try await engine.addMixerParticipant(mixer.id, Rooms.participant(peer), source: .producer(audio.id))
            } catch {
                logger.warning("mixer input failed", ["conversation": room.conversationID, "member": peer.memberID, "error": "\(error)"])
            }
            await applyMixes(room)
        }
        await updateMode(room)
        _ = try? conversations.setMedia(memberID: member.id, conversationID: conversationID, applicationID: applicationID,
                                        media: MemberMedia(enabled: true, muted: false, earmuffed: peer.earmuffed))
        await renegotiateOthers(of: peer, in: room)
        return Published(answer: publication.answer, producerID: audio.id, memberID: member.id)
    }

    /// `rtc:mute`: stops (or restarts) forwarding the member's microphone.
    public func mute(user: User, applicationID: String, client: ClientID, conversationID: String, muted: Bool) async throws {
        let member = try joinedMember(user, conversationID, applicationID: applicationID)
        guard let room = rooms[conversationID] else { throw LiveError.notPublishing }
        await lock(room)
        defer { unlock(room) }
        guard let peer = room.peers[client], peer.publication != nil else { throw LiveError.notPublishing }
        if peer.muted != muted {
            try await setMicrophone(peer, muted: muted)
            _ = try? conversations.setMedia(memberID: member.id, conversationID: conversationID, applicationID: applicationID,
                                            media: MemberMedia(enabled: true, muted: muted, earmuffed: peer.earmuffed))
            _ = try? conversations.postEvent(conversationID: conversationID, applicationID: applicationID,
                                             type: muted ? "audio:mute:on" : "audio:mute:off", from: member.id, body: [:])
            if muted { setSpeaking(peer, false, room: room) }
            await updateForwarding(room)
        }
    }

    /// Pauses (muted) or resumes the peer's published microphone (its speaking indicator is the caller's).
    private func setMicrophone(_ peer: Peer, muted: Bool) async throws(LiveError) {
        guard let publication = peer.publication, peer.muted != muted else { return }
        peer.muted = muted
        do {
            if muted { try await engine.pause(producer: publication.producer) } else { try await engine.resume(producer: publication.producer) }
        } catch { throw .media(error) }
    }

    /// `rtc:earmuff`: stops (or restarts) everything the member receives.
    public func earmuff(user: User, applicationID: String, client: ClientID, conversationID: String, earmuffed: Bool) async throws {
        let member = try joinedMember(user, conversationID, applicationID: applicationID)
        let room = room(conversationID, applicationID: applicationID)
        await lock(room)
        defer { unlock(room) }
        let peer = try peer(in: room, member: member, user: user, client: client)
        if peer.earmuffed != earmuffed {
            peer.earmuffed = earmuffed
            await applyForwarding(peer, room: room)
            _ = try? conversations.setMedia(memberID: member.id, conversationID: conversationID, applicationID: applicationID,
                                            media: MemberMedia(enabled: member.media.enabled, muted: member.media.muted, earmuffed: earmuffed))
            _ = try? conversations.postEvent(conversationID: conversationID, applicationID: applicationID,
                                             type: earmuffed ? "audio:earmuff:on" : "audio:earmuff:off", from: member.id, body: [:])
        }
    }

    /// `rtc:unpublish`: media off for this connection (both transports), `member:media` disabled.
    public func unpublish(user: User, applicationID: String, client: ClientID, conversationID: String) async throws {
        let member = try joinedMember(user, conversationID, applicationID: applicationID)
        guard let room = rooms[conversationID] else { return }
        await lock(room)
        defer { unlock(room) }
        if let peer = room.peers[client] { await removePeer(peer, from: room) }
        _ = try? conversations.setMedia(memberID: member.id, conversationID: conversationID, applicationID: applicationID,
                                        media: MemberMedia(enabled: false))
    }

    // MARK: Subscribing

    /// An offer for a member's subscription, and which m-line carries whom.
    public struct Offer: Sendable, Hashable {
        /// Nil while nobody else publishes.
        public var offer: String?
        public var tracks: [Track]
    }

    /// `rtc:subscribe`: the first offer (nil while nobody else publishes; it is pushed as
    /// `rtc:offer` when someone does). A second call restarts the subscription.
    public func subscribe(user: User, applicationID: String, client: ClientID, conversationID: String) async throws -> Offer {
        let member = try joinedMember(user, conversationID, applicationID: applicationID)
        let room = room(conversationID, applicationID: applicationID)
        await lock(room)
        defer { unlock(room) }
        let peer = try peer(in: room, member: member, user: user, client: client)
        if let old = peer.subscription {
            peer.subscription = nil
            peer.paused = [:]
            await close(transport: old.transport, in: room)
        }
        peer.subscribing = true
        peer.awaitingAnswer = false
        peer.dirty = false
        await updateMode(room)
        let offer = try await renegotiate(peer, in: room, push: false)
        updateCounts()
        return Offer(offer: offer, tracks: tracks(peer, room: room))
    }

    /// `rtc:answer`: the client's answer to our latest offer.
    public func answer(client: ClientID, conversationID: String, answer: String) async throws(LiveError) {
        guard let room = rooms[conversationID] else { throw .noOffer }
        await lock(room)
        defer { unlock(room) }
        guard let peer = room.peers[client], let subscription = peer.subscription, peer.awaitingAnswer else { throw .noOffer }
        do {
            peer.subscription = try await engine.answerSubscription(subscription, answer: answer)
        } catch { throw .media(error) }
        peer.awaitingAnswer = false
        await applyForwarding(peer, room: room)
        if peer.dirty {
            peer.dirty = false
            _ = try? await renegotiate(peer, in: room, push: true)
        }
    }

    /// Brings the peer's subscription to every other publisher in the room; returns the new
    /// offer (also pushed as `rtc:offer` when `push`), nil when nothing changed or an offer is
    /// already out (then it is redone after the answer).
    @discardableResult
    private func renegotiate(_ peer: Peer, in room: Room, push: Bool) async throws(LiveError) -> String? {
        guard peer.subscribing else { return nil }
        if peer.awaitingAnswer {
            peer.dirty = true
            return nil
        }
        let wanted = room.mixer.map { [$0.output] }
            ?? room.peers.values.filter { $0 !== peer }.compactMap { $0.publication?.producer }.sorted { $0.rawValue < $1.rawValue }
        var subscription = peer.subscription
        if subscription == nil {
            if wanted.isEmpty { return nil }
            let router = try await ensureRouter(room)
            do { subscription = try await engine.openSubscription(router: router) } catch { throw .media(error) }
            peer.subscription = subscription
            updateCounts()
        }
        guard let current = subscription else { return nil }
        let updated: MediaEngine.Subscription
        do { updated = try await engine.updateSubscription(current, producers: wanted, reuseInactive: !peer.freshLines) } catch {
            throw .media(error)
        }
        peer.freshLines = false
        peer.subscription = updated
        if let mixer = room.mixer, let consumer = engine.activeConsumers(updated)[mixer.output] {
            // The peer hears the mix as its participant: without its own voice, nothing while earmuffed.
            try? await engine.bindMixerOutput(mixer.id, consumer: consumer, to: Rooms.participant(peer))
        }
        guard updated.version != current.version else { return nil }
        peer.awaitingAnswer = true
        // New consumers start forwarding at once; pause the ones policy says to.
        let live = Set(engine.activeConsumers(updated).values)
        peer.paused = peer.paused.filter { live.contains($0.key) }
        await applyForwarding(peer, room: room)
        if push {
            clients.send(.offer(conversationID: room.conversationID, offer: updated.offer, tracks: tracks(peer, room: room)), to: peer.client)
        }
        return updated.offer
    }

    private func renegotiateOthers(of peer: Peer, in room: Room) async {
        for other in room.peers.values where other !== peer {
            do { try await renegotiate(other, in: room, push: true) } catch {
                logger.warning("renegotiation failed", ["conversation": room.conversationID, "member": other.memberID, "error": "\(error)"])
            }
        }
        await updateForwarding(room)
    }

    /// Which m-line carries whom.
    private func tracks(_ peer: Peer, room: Room) -> [Track] {
        guard let subscription = peer.subscription else { return [] }
        var out: [Track] = []
        for (index, consumer) in subscription.consumers.enumerated() where !subscription.inactive.contains(index) {
            if let mixer = room.mixer, consumer.producerID == mixer.output {
                out.append(Track(mid: String(index), memberID: "", userID: "", name: "Room mix", producerID: mixer.output))
                continue
            }
            guard let owner = room.peer(producer: consumer.producerID) else { continue }
            out.append(Track(mid: String(index), memberID: owner.memberID, userID: owner.userID, name: owner.userName,
                             producerID: consumer.producerID))
        }
        return out
    }

    // MARK: Forwarding policy

    private func forwards(_ producer: ProducerID, in room: Room) -> Bool {
        if producer == room.mixer?.output { return true }
        return room.peers.count < settings.forwardAllBelow || room.forwarded.contains(producer)
    }

    /// Recomputes the loudest speakers of a large room and applies any change to every listener.
    private func updateForwarding(_ room: Room) async {
        var chosen: Set<ProducerID> = []
        if room.peers.count >= settings.forwardAllBelow {
            let ranked = room.peers.values.filter { $0.publication != nil && !$0.muted }.sorted { $0.score > $1.score }
            chosen = Set(ranked.prefix(settings.loudest).compactMap { $0.publication?.producer })
        }
        guard chosen != room.forwarded else { return }
        room.forwarded = chosen
        for peer in room.peers.values { await applyForwarding(peer, room: room) }
    }

    /// Pauses or resumes each consumer of the peer per earmuff and the loudest-N choice.
    private func applyForwarding(_ peer: Peer, room: Room) async {
        guard let subscription = peer.subscription else { return }
        for (producer, consumer) in engine.activeConsumers(subscription) {
            let pause = peer.earmuffed || !forwards(producer, in: room)
            // A consumer nobody paused yet is forwarding.
            if (peer.paused[consumer] ?? false) == pause {
                peer.paused[consumer] = pause
                continue
            }
            do {
                if pause { try await engine.pause(consumer: consumer) } else { try await engine.resume(consumer: consumer) }
                peer.paused[consumer] = pause
            } catch {
                peer.paused[consumer] = nil
            }
        }
    }

    // MARK: Mixing

    /// A peer's participant in the room's mixer.
    static func participant(_ peer: Peer) -> MixerParticipantID { MixerParticipantID("c\(peer.client.rawValue)") }

    /// Whether the room should mix now, by its mode (the conversation's own, else the server's) and size.
    func wantsMix(_ room: Room) -> Bool {
        if !room.lines.isEmpty || mixRequired[room.conversationID] != nil { return true }
        return room.setting.mixes(members: room.publishers, defaults: settings)
    }

    private func storedSetting(_ conversationID: String, applicationID: String) -> RoomModeSetting {
        guard let conversation = try? conversations.get(id: conversationID, applicationID: applicationID) else { return RoomModeSetting() }
        return RoomModeSetting(stored: conversation.properties)
    }

    /// The conversation was updated (its properties may hold a new `room_mode`): a live room
    /// switches between forwarding and mixing now, renegotiating every subscriber; nobody rejoins.
    public func conversationUpdated(conversationID: String, applicationID: String) async {
        guard let room = rooms[conversationID], room.applicationID == applicationID else { return }
        await lock(room)
        defer { unlock(room) }
        let setting = storedSetting(conversationID, applicationID: applicationID)
        guard setting != room.setting else { return }
        room.setting = setting
        logger.info("room setting changed", ["conversation": conversationID, "mode": setting.mode?.rawValue ?? "default"])
        await updateMode(room)
    }

    /// The room's current audio path, for tests and diagnostics: nil when the room has no state here.
    public func currentMode(conversationID: String) -> RoomMode? {
        guard let room = rooms[conversationID] else { return nil }
        return room.mixer == nil ? .sfu : .mixed
    }

    /// Switches the room between forwarding and mixing when its mode says so: every subscriber is
    /// renegotiated (the old m-lines go `inactive`, the new ones are added), nobody is dropped.
    func updateMode(_ room: Room) async {
        let wanted = wantsMix(room) && !(room.peers.isEmpty && room.lines.isEmpty)
        guard wanted != (room.mixer != nil) else { return }
        for peer in room.peers.values { peer.freshLines = true }
        if wanted {
            guard let router = try? await ensureRouter(room),
                  let mixer = try? await engine.createMixer(router: router, capacity: max(16, settings.capacity + 8),
                                                            maxSpeakers: settings.mixSpeakers) else {
                logger.warning("mixer not created", ["conversation": room.conversationID])
                return
            }
            room.mixer = mixer
            for peer in room.peers.values {
                if let producer = peer.publication?.producer {
                    try? await engine.addMixerParticipant(mixer.id, Rooms.participant(peer), source: .producer(producer))
                } else {
                    try? await engine.addMixerParticipant(mixer.id, Rooms.participant(peer), source: .none)
                }
            }
            await applyMixes(room)
            logger.info("room mixing", ["conversation": room.conversationID, "members": "\(room.peers.count)"])
        } else if let mixer = room.mixer {
            room.mixer = nil
            logger.info("room forwarding", ["conversation": room.conversationID, "members": "\(room.peers.count)"])
            for peer in room.peers.values { _ = try? await renegotiate(peer, in: room, push: true) }
            _ = try? await engine.closeMixer(mixer.id)
            await updateForwarding(room)
            return
        }
        // Every subscriber, also those who had nothing to receive yet (alone in the room until a phone line came).
        for peer in room.peers.values where peer.subscribing { _ = try? await renegotiate(peer, in: room, push: true) }
    }

    /// The room's mixer, for players and recorders (nil unless the room mixes).
    public func mixer(conversationID: String) -> MediaEngine.MixerInfo? { rooms[conversationID]?.mixer }

    /// A member's participants in the room's mixer (one per socket with media).
    public func mixerParticipants(conversationID: String, memberID: String) -> [MixerParticipantID] {
        guard let room = rooms[conversationID], room.mixer != nil else { return [] }
        return participants(of: memberID, in: room)
    }

    private func participants(of memberID: String, in room: Room) -> [MixerParticipantID] {
        room.peers.values.filter { $0.memberID == memberID }.map(Rooms.participant) + (room.lines[memberID].map { [$0] } ?? [])
    }

    // MARK: Who hears whom (calls)

    /// Sets what the members of the conversation's calls hear and who hears them (`ConversationPolicy`),
    /// replacing the last set: members left out go back to hearing and being heard by everyone. The room
    /// mixes while any of them is not the default.
    /// (`applicationID` is needed only for a room not started yet.)
    public func setMemberMixes(conversationID: String, applicationID: String?, _ mixes: [String: MemberMix]) async {
        guard let room = rooms[conversationID] ?? applicationID.map({ room(conversationID, applicationID: $0) }) else { return }
        await lock(room)
        defer { unlock(room) }
        let dropped = room.mixes.keys.filter { mixes[$0] == nil }
        room.mixes = mixes
        if mixes.values.contains(where: { !$0.isDefault }) {
            markMixRequired(conversationID)
            await updateMode(room)
        }
        await applyMixes(room, reset: dropped)
    }

    /// Gives each member with a mix or silenced (and each of `reset`) its options on all its participants:
    /// run whenever a participant comes or goes, as the lists name members, not participants.
    private func applyMixes(_ room: Room, reset: [String] = []) async {
        guard let mixer = room.mixer, !(room.mixes.isEmpty && room.silenced.isEmpty && reset.isEmpty) else { return }
        for member in Set(room.mixes.keys).union(room.silenced.keys).union(reset) {
            let options = mixerOptions(of: member, in: room)
            for participant in participants(of: member, in: room) { try? await engine.setMixerOptions(mixer.id, participant, options) }
        }
    }

    /// The member's `MemberMix`, muted and earmuffed as well when its `member:media` says so.
    private func mixerOptions(of member: String, in room: Room) -> MixerParticipantOptions {
        var options = (room.mixes[member] ?? MemberMix()).options { self.participants(of: $0, in: room) }
        if let silenced = room.silenced[member] {
            options.muted = options.muted || silenced.muted
            options.earmuffed = options.earmuffed || silenced.earmuffed
        }
        return options
    }

    /// A member was muted or earmuffed, or no longer is (`member:media`, whoever set it: its own client with
    /// `rtc:mute` / `rtc:earmuff`, an app server through the Conversation API, the Voice API on its call):
    /// its sockets' microphones pause or resume and what they receive stops or restarts, and its participants
    /// in the mix (a phone line's too) follow. What its own client asked is already done, so nothing changes then.
    func memberMedia(conversationID: String, memberID: String) async {
        guard let room = rooms[conversationID] else { return }
        await lock(room)
        defer { unlock(room) }
        guard let member = try? conversations.member(id: memberID, conversationID: conversationID, applicationID: room.applicationID),
              member.state == .joined, member.media.enabled else { return }
        let (muted, earmuffed) = (member.media.muted, member.media.earmuffed)
        let was = room.silenced[memberID]
        room.silenced[memberID] = muted || earmuffed ? (muted, earmuffed) : nil
        var microphones = false
        for peer in room.peers.values where peer.memberID == memberID {
            if peer.publication != nil, peer.muted != muted {
                try? await setMicrophone(peer, muted: muted)
                if muted { setSpeaking(peer, false, room: room) }
                microphones = true
            }
            if peer.earmuffed != earmuffed {
                peer.earmuffed = earmuffed
                await applyForwarding(peer, room: room)
            }
        }
        if microphones { await updateForwarding(room) }
        if was?.muted != room.silenced[memberID]?.muted || was?.earmuffed != room.silenced[memberID]?.earmuffed {
            await applyMixes(room, reset: room.silenced[memberID] == nil ? [memberID] : [])
        }
    }

    // MARK: Lines (phone legs)

    /// A member whose audio is not WebRTC (a phone leg's RTP): the room mixes while it has one, and the
    /// line is a mixer participant whose port `make` builds on the mixer's worker. Replaces an earlier
    /// line of the member.
    /// `mix`, when given, is what the line hears and who hears it from its first tick (see `setMemberMixes`).
    public func addLine(conversationID: String, applicationID: String, memberID: String,
                        mix: MemberMix? = nil, make: @escaping MixerPortFactory) async throws(LiveError) {
        let room = room(conversationID, applicationID: applicationID)
        await lock(room)
        defer { unlock(room) }
        let participant = Self.lineParticipant(memberID: memberID)
        room.lines[memberID] = participant
        if let mix { room.mixes[memberID] = mix }
        await updateMode(room)
        guard let mixer = room.mixer else {
            room.lines[memberID] = nil
            await closeRouterIfEmpty(room)
            throw .media(.invalid("the conversation's mixer could not be started"))
        }
        do {
            try await engine.addMixerPort(mixer.id, participant, options: mixerOptions(of: memberID, in: room), make: make)
        } catch {
            room.lines[memberID] = nil
            await updateMode(room)
            await closeRouterIfEmpty(room)
            throw .media(error)
        }
        await applyMixes(room)
    }

    /// The line leaves (its port closes); the room stops mixing when nothing else needs it.
    public func removeLine(conversationID: String, memberID: String) async {
        guard let room = rooms[conversationID] else { return }
        await lock(room)
        defer { unlock(room) }
        guard let participant = room.lines.removeValue(forKey: memberID) else { return }
        if let mixer = room.mixer { try? await engine.removeMixerParticipant(mixer.id, participant) }
        await applyMixes(room)
        await updateMode(room)
        await closeRouterIfEmpty(room)
    }

    /// A member's line in its conversation's mixer.
    public static func lineParticipant(memberID: String) -> MixerParticipantID { MixerParticipantID("l" + memberID) }

    /// The conversation's calls need its mix (a talk, a stream, a recording): the room mixes from now on.
    public func requireMix(conversationID: String) async {
        markMixRequired(conversationID)
        guard let room = rooms[conversationID] else { return }
        await lock(room)
        defer { unlock(room) }
        await updateMode(room)
    }

    private func markMixRequired(_ conversationID: String) {
        let now = ContinuousClock.now
        if mixRequired[conversationID] == nil {
            mixRequired = mixRequired.filter { rooms[$0.key] != nil || now - $0.value < .seconds(3600) }
        }
        mixRequired[conversationID] = now
    }

    // MARK: Speakers

    /// Audio levels of a room's producers (every ~300 ms): speaking indicators and loudest-N.
    public func levels(router: RouterID, _ levels: [AudioLevel]) async {
        guard let conversationID = roomsByRouter[router], let room = rooms[conversationID] else { return }
        await lock(room)
        defer { unlock(room) }
        let now = ContinuousClock.now
        for level in levels {
            guard let peer = room.peer(producer: level.producer) else { continue }
            let mean = peer.muted ? 0 : Double(level.mean)
            peer.score = peer.score * 0.6 + mean * 0.4
            if !peer.muted && level.peak >= settings.speakingLoudness {
                peer.lastLoud = now
                setSpeaking(peer, true, room: room)
            } else if peer.speaking, let last = peer.lastLoud, now - last >= settings.speakingHold {
                setSpeaking(peer, false, room: room)
            }
        }
        await updateForwarding(room)
    }

    private func setSpeaking(_ peer: Peer, _ speaking: Bool, room: Room) {
        guard peer.speaking != speaking else { return }
        peer.speaking = speaking
        // Off is posted for a member who has just left too: the others' indicator must not stay lit.
        _ = try? conversations.postEvent(conversationID: room.conversationID, applicationID: room.applicationID,
                                         type: speaking ? "audio:speaking:on" : "audio:speaking:off", from: peer.memberID, body: [:],
                                         fromLeftMember: !speaking)
    }

    // MARK: Teardown

    /// Frees the peer's transports and tells the others (renegotiation drops its m-line).
    private func removePeer(_ peer: Peer, from room: Room) async {
        guard room.peers[peer.client] === peer else { return }
        room.peers[peer.client] = nil
        setSpeaking(peer, false, room: room)
        let published = peer.publication != nil
        if let mixer = room.mixer {
            try? await engine.removeMixerParticipant(mixer.id, Rooms.participant(peer))
            await applyMixes(room)
        }
        if let publication = peer.publication { await close(transport: publication.transport, in: room) }
        if let subscription = peer.subscription { await close(transport: subscription.transport, in: room) }
        peer.publication = nil
        peer.subscription = nil
        peer.subscribing = false
        if published && room.mixer == nil { await renegotiateOthers(of: peer, in: room) }
        await updateMode(room)
        await closeRouterIfEmpty(room)
        updateCounts()
    }

    /// Closes a transport; the consumers it took with it (its own, and the other members'
    /// consumers of its producers) leave every peer's pause state.
    private func close(transport id: TransportID, in room: Room) async {
        guard let closed = try? await engine.closeTransport(id), !closed.consumers.isEmpty else { return }
        let gone = Set(closed.consumers)
        for peer in room.peers.values where !peer.paused.isEmpty {
            peer.paused = peer.paused.filter { !gone.contains($0.key) }
        }
    }

    /// The last member gone: the router closes with whatever is left in it.
    private func closeRouterIfEmpty(_ room: Room) async {
        guard room.peers.isEmpty, room.lines.isEmpty, let router = room.router else { return }
        mixRequired[room.conversationID] = nil
        room.router = nil
        room.mixer = nil
        roomsByRouter[router] = nil
        _ = try? await engine.closeRouter(router)
    }

    /// A realtime socket closed: its media goes now; its members are marked left after the
    /// grace period unless the user is connected again by then.
    public func clientClosed(_ client: ClientID) async {
        var gone: [(conversationID: String, applicationID: String, memberID: String, userID: String)] = []
        for room in Array(rooms.values) where room.peers[client] != nil {
            await lock(room)
            if let peer = room.peers[client] {
                gone.append((room.conversationID, room.applicationID, peer.memberID, peer.userID))
                await removePeer(peer, from: room)
            }
            unlock(room)
        }
        guard !gone.isEmpty else { return }
        closes += 1
        let close = closes
        for entry in gone { pendingLeaves[entry.memberID] = close }
        let grace = settings.leaveGrace
        Task { [weak self] in
            try? await Task.sleep(for: grace)
            await self?.leaveIfGone(gone, close: close)
        }
    }

    /// After a restart: members that were live in a room when the process stopped lost their connections
    /// with it, so each gets the leave grace a closed connection gets — it leaves unless its user is
    /// connected again, or back in the room, by then.
    public func recoverAfterRestart() {
        guard let live = try? conversations.joinedMembersWithAudio(), !live.isEmpty else { return }
        closes += 1
        let close = closes
        let gone = live.map { (conversationID: $0.member.conversationID, applicationID: $0.applicationID,
                               memberID: $0.member.id, userID: $0.member.userID) }
        for entry in gone { pendingLeaves[entry.memberID] = close }
        logger.info("members live at the last stop leave after the grace period unless they return", ["members": String(gone.count)])
        let grace = settings.leaveGrace
        Task { [weak self] in
            try? await Task.sleep(for: grace)
            await self?.leaveIfGone(gone, close: close)
        }
    }

    private func leaveIfGone(_ gone: [(conversationID: String, applicationID: String, memberID: String, userID: String)], close: UInt64) {
        for entry in gone {
            // A later close of the same member has its own, later timer.
            guard pendingLeaves[entry.memberID] == close else { continue }
            pendingLeaves[entry.memberID] = nil
            if clients.isConnected(userID: entry.userID) { continue }
            if let room = rooms[entry.conversationID], room.peers.values.contains(where: { $0.memberID == entry.memberID }) { continue }
            do {
                _ = try conversations.leave(memberID: entry.memberID, conversationID: entry.conversationID,
                                            applicationID: entry.applicationID, reason: "disconnected")
                logger.info("member left after its connection closed", ["conversation": entry.conversationID, "member": entry.memberID])
            } catch {
                // Already left (or the conversation is gone): nothing to do.
            }
        }
    }

    /// A member left (`left`: REST, app server, or the grace timer), or its audio was disabled: its sockets' media goes. Disabling audio leaves a
    /// socket that has no connection yet alone, so its earmuff state (set before publishing, whose own
    /// `member:media` says audio is off) is kept.
    public func memberGone(conversationID: String, memberID: String, left: Bool) async {
        guard let room = rooms[conversationID] else { return }
        await lock(room)
        defer { unlock(room) }
        if left { room.silenced[memberID] = nil }
        for peer in Array(room.peers.values) where peer.memberID == memberID {
            if left || peer.publication != nil || peer.subscription != nil { await removePeer(peer, from: room) }
        }
    }
}
