import Foundation
import Observation

/// The video chat app as state: connect to a session, publish, subscribe to every stream that
/// appears, follow streams and connections coming and going, and, when asked, their live captions.
@Observable
@MainActor
public final class VideoChatViewModel {
    public private(set) var connectionID: String?
    public private(set) var streams: [VideoStream] = []
    public private(set) var published: VideoStream?
    public private(set) var received: [String: VideoFrameCounter] = [:]
    public private(set) var connections: [String] = []
    public private(set) var error: SessionError?
    /// The newest caption of each stream, while the session's live captions run (with `captions` at connect).
    public private(set) var captions: [String: VideoCaption] = [:]
    /// Streams whose video the audio fallback has off or warns of, by id — received ones for this client's link or
    /// their publisher's, the published one for this client's own (`publish(…, audioFallback: true)`):
    /// `.videoDisableWarning` (show a warning) or `.videoDisabled` (audio only: show a note); gone once lifted or on again.
    public private(set) var fallback: [String: AudioFallbackEvent] = [:]
    @ObservationIgnored private var session: VideoSession?
    @ObservationIgnored private var wantsCaptions = false
    @ObservationIgnored private var listener: Task<Void, Never>?

    public init() {}

    /// With `captions`, asks for every stream's captions (`captions` then follows them).
    public func connect(server: URL, sessionID: String, token: String, captions: Bool = false) async {
        wantsCaptions = captions
        do {
            let session = try await VideoSession.connect(to: server, sessionID: sessionID, token: token)
            self.session = session
            connectionID = session.connectionID
            connections = session.connections.map(\.id)
            let events = session.events()
            listener = Task { [weak self] in
                for await e in events { await self?.apply(e) }
            }
            for stream in session.streams { await apply(.streamCreated(stream)) }
        } catch let e { error = e }
    }

    func apply(_ e: VideoEvent) async {
        switch e {
        case .streamCreated(let s):
            guard !streams.contains(where: { $0.id == s.id }) else { return }
            streams.append(s)
            let counter = VideoFrameCounter()
            received[s.id] = counter
            do {
                try await session?.subscribe(s.id, video: counter)
                if wantsCaptions { try await session?.subscribeToCaptions(s.id) }
            } catch let e { error = e }
        case .streamDestroyed(let s, _):
            streams.removeAll { $0.id == s.id }
            received[s.id] = nil
            captions[s.id] = nil
            fallback[s.id] = nil
        case .captionReceived(let id, let text, let isFinal): captions[id] = VideoCaption(text: text, isFinal: isFinal)
        case .audioFallback(let id, let event): noteFallback(event, of: id)
        case .publisherAudioFallback(let id, let event?, _): noteFallback(event, of: id)
        case .connectionCreated(let c): connections.append(c.id)
        case .connectionDestroyed(let c, _): connections.removeAll { $0 == c.id }
        case .reconnected(let id): connectionID = id
        case .error(let e): error = e
        default: break
        }
    }

    private func noteFallback(_ event: AudioFallbackEvent, of streamID: String) {
        switch event {
        case .videoDisableWarning: if fallback[streamID] != .videoDisabled { fallback[streamID] = event }
        case .videoDisabled: fallback[streamID] = event
        case .videoDisableWarningLifted: if fallback[streamID] == .videoDisableWarning { fallback[streamID] = nil }
        case .videoEnabled: fallback[streamID] = nil
        }
    }

    /// With `captions`, live captions transcribe what `audio` says while they run; with `audioFallback`, the video
    /// stops while this client's own link cannot carry it (`fallback[published.id]`).
    public func publish(name: String, audio: AudioSource?, video: IVFFileSource?, captions: Bool = false, audioFallback: Bool = false) async {
        do {
            published = try await session?.publish(name: name, audio: audio, video: video, publishCaptions: captions, audioFallback: audioFallback)
        } catch let e { error = e }
    }

    public func unpublish() async {
        guard let published else { return }
        try? await session?.unpublish(published.id)
        fallback[published.id] = nil
        self.published = nil
    }

    public func disconnect() async {
        listener?.cancel()
        await session?.disconnect()
        session = nil
        streams = []
        received = [:]
        captions = [:]
        fallback = [:]
        connectionID = nil
    }
}
