import Audio
import Foundation
import Media
import Platform
import Runtime

/// The one owner of live state: audio rooms, video sessions and (later) calls, over one media engine.
/// The API layer builds it once per server and translates requests into calls on its parts; what
/// Live sends to clients goes through `Clients`, which the API layer implements.
public final class Orchestrator: Sendable {
    public let engine: MediaEngine
    /// The engine's events, for every part that listens (audio levels feed the rooms).
    public let events: MediaEventHub
    /// Audio in conversations (`rtc:*`).
    public let rooms: Rooms
    /// Video sessions (`video:*` and the Video REST API).
    public let video: VideoHub
    /// Calls and legs: NCCO engines, webhooks, in-app voice.
    public let calls: Calls
    /// Named rooms with no signaling, for the development-only `/test/media` routes.
    public let bench: MediaBench
    /// Players and recorders in mixed conversations.
    public let audio: ConversationAudio

    public init(engine: MediaEngine, core: PlatformCore, roomSettings: RoomSettings, clients: any Clients,
                voiceWebhooks: VoiceWebhooks, callMedia: any CallMedia = NoCallMedia(),
                audioDirectory: String = FileManager.default.temporaryDirectory.path + "/switchboard-audio", http: HTTPClient? = nil) {
        self.engine = engine
        calls = Calls(core: core, webhooks: voiceWebhooks, media: callMedia)
        events = MediaEventHub(engine: engine)
        let rooms = Rooms(engine: engine, conversations: core.conversations, settings: roomSettings, clients: clients)
        self.rooms = rooms
        let video = VideoHub(core: core, media: EngineVideoMediaBridge(engine: engine), clients: clients)
        self.video = video
        let bench = MediaBench(engine: engine)
        self.bench = bench
        let players = MixerPlayers(engine: engine, synthesizer: SpeechSynthesizer(), http: http, downloads: audioDirectory + "/downloads")
        audio = ConversationAudio(rooms: rooms, players: players,
                                  recordings: Recordings(engine: engine, players: players, directory: audioDirectory + "/recordings"))
        events.subscribe { event in
            switch event {
            case .audioLevels(let router, let levels): Task { await rooms.levels(router: router, levels) }
            case .transportState(let id, .failed): bench.transportFailed(id)
            case .unusedLayers(let producer, let rids): video.unusedLayers(producer: producer, rids: rids)
            case .audioFallback(let consumer, let change): video.audioFallback(consumer: consumer, change)
            case .publisherAudioFallback(let producer, let change, let sendVideo):
                video.publisherAudioFallback(producer: producer, change, sendVideo: sendVideo)
            default: break
            }
        }
        Task { await rooms.recoverAfterRestart() }
    }
}
