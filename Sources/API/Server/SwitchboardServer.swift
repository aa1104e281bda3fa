import Foundation
import Live
import Media
import Platform
import Runtime
import Telephony
import Wire

/// The whole server: loops, listeners, routes. Tests start it in-process on port 0.
public final class SwitchboardServer: Sendable {
    public static let version = "0.1.0"

    public let configuration: ServerConfiguration
    public let group: EventLoopGroup
    /// Threads for blocking work: request handlers and realtime requests (the store, key generation).
    let work = WorkPool(name: "work")
    public let core: PlatformCore
    let http: HTTPServer
    public let gateway: RealtimeGateway
    /// The media plane: UDP workers, routers, transports.
    public let media: MediaEngine
    /// Live state: audio rooms, video sessions, calls; the routes and the gateway translate into it.
    public let live: Orchestrator
    let webhooks: WebhookDispatcher
    let voiceWebhooks: VoiceWebhooks
    /// Session monitoring's callbacks (video sessions' events to their applications).
    let videoCallbacks: VoiceWebhooks
    let sweeper = Mutex<Task<Void, Never>?>(nil)
    /// The account, and whether it was created by this start (its secret is printed once).
    public let account: (Account, created: Bool)
    let logger = Logger(label: "server")
    let linkBase: LinkBaseMiddleware
    let started = Mutex<(http: SocketAddress?, https: SocketAddress?, caFile: String?)>((nil, nil, nil))
    /// Where the HTTP listener is bound, once it is: what the server's own rendering browsers connect to.
    let boundHTTP = BoundAddress()
    /// The certificate HTTPS and SIP over TLS serve, once selected (see `serverCertificate`).
    let certificate = Mutex<(TLSContext, developmentCA: String?)?>(nil)
    /// The telephony edge (nil with `--sip-port 0`); it binds in `startSIP`.
    public let sip: SIPService?
    let sipStarted = Mutex(false)
    let servicesStarted = Mutex(false)
    /// Phone and websocket legs' media, and inbound calls over the SIP edge.
    let lineMedia: LineCallMedia
    /// The built-in voice app server of the dialer (development mode only).
    let phoneDemo: PhoneDemoApp?

    public init(configuration: ServerConfiguration) throws {
        self.configuration = configuration
        try FileManager.default.createDirectory(atPath: configuration.dataDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let shiftedClock = configuration.development ? ShiftedClock() : nil
        core = try PlatformCore(dataDirectory: configuration.dataDirectory, clock: shiftedClock ?? SystemClock())
        account = try core.accounts.ensurePrimary()
        group = EventLoopGroup(threads: configuration.threads, name: "http")
        let authenticator = Authenticator(core: core)
        var router = Router()
        SystemRoutes(metrics: .shared).register(on: &router)
        Metrics.shared.collector("websocket-lines") { WebSocketLine.Counters.render() }
        ApplicationRoutes(core: core).register(on: &router)
        UserRoutes(core: core).register(on: &router)
        NumberRoutes(core: core, authenticator: authenticator).register(on: &router)
        sip = configuration.sipPort == 0 ? nil
            : SIPService(core: core, host: Self.sipHost(configuration), port: configuration.sipPort, rtpPorts: configuration.rtpPorts,
                         maxCalls: configuration.sipMaxCalls, maxPendingInvites: configuration.sipMaxPendingInvites)
        SIPRoutes(core: core, authenticator: authenticator, service: sip).register(on: &router)
        let roomSettings = RoomSettings(environment: ProcessInfo.processInfo.environment)
        var realtimeSettings = RealtimeGateway.Settings()
        realtimeSettings.pingInterval = configuration.realtimePingInterval
        realtimeSettings.loginTimeout = configuration.realtimeLoginTimeout
        realtimeSettings.iceServers = configuration.iceServers
        gateway = RealtimeGateway(core: core, authenticator: authenticator, settings: realtimeSettings, work: work,
                                  deliveryLoop: group.loops[0])
        core.conversations.bus.add(gateway)
        gateway.register(on: &router)
        media = try MediaEngine(configuration: configuration.mediaConfiguration)
        let clients = RealtimeClients(gateway: gateway)
        voiceWebhooks = VoiceWebhooks(client: HTTPClient(group: group))
        var callbackSettings = VoiceWebhooks.Settings()
        callbackSettings.metricPrefix = "switchboard_video_callback"
        videoCallbacks = VoiceWebhooks(client: HTTPClient(group: group), settings: callbackSettings)
        let publicBase = configuration.publicURL ?? "http://\(configuration.listen)"
        let callsStore = core.calls
        let resolveLeg: @Sendable (String) -> MixerCallMedia.LegPlace? = { uuid in
            guard let leg = try? callsStore.get(uuid: uuid) else { return nil }
            return MixerCallMedia.LegPlace(conversationID: leg.conversationID, memberID: leg.memberID, applicationID: leg.applicationID)
        }
        let mixerMedia = MixerCallMedia(resolve: resolveLeg, recordingURL: { "\(publicBase)/v1/recordings/\($0.rawValue)/file" })
        // Phone legs (over the SIP edge, when there is one) and websocket legs join the conversations' mixes as lines.
        let (platform, rtpPorts, loops) = (core, configuration.rtpPorts, group)
        let lineMedia = LineCallMedia(mixer: mixerMedia, edge: sip?.edge, group: loops, core: platform, rtpPorts: rtpPorts,
                                      host: sip?.host ?? Self.sipHost(configuration), rtpTimeout: configuration.rtpTimeout, resolve: resolveLeg)
        self.lineMedia = lineMedia
        live = Orchestrator(engine: media, core: core, roomSettings: roomSettings, clients: clients, voiceWebhooks: voiceWebhooks,
                            callMedia: lineMedia, audioDirectory: configuration.dataDirectory + "/audio", http: HTTPClient(group: group))
        mixerMedia.attach(audio: live.audio, rooms: live.rooms, events: live.calls)
        lineMedia.attach(rooms: live.rooms, calls: live.calls)
        live.calls.attach(clients: clients)
        ConversationRoutes(core: core, capacity: roomSettings.capacity, rooms: live.rooms).register(on: &router)
        CallRoutes(core: core, calls: live.calls).register(on: &router)
        ConversationAudioRoutes(core: core, audio: live.audio).register(on: &router)
        CallSignaling(calls: live.calls).register(on: gateway)
        VideoSignaling(hub: live.video, clients: clients, iceServers: configuration.iceServers).register(on: gateway)
        let monitor = VideoMonitor(core: core, hooks: videoCallbacks)
        let archives = VideoArchives(directory: configuration.dataDirectory + "/video/archives", hub: live.video,
                                     recordings: live.audio.recordings, maxDuration: configuration.archiveMaxDuration) { archive in
            monitor.archiveChanged(archive)
        }
        let broadcasts = VideoBroadcasts(directory: configuration.dataDirectory + "/video/broadcasts", hub: live.video, engine: live.audio.recordings.engine,
                                         rtmpsCA: configuration.rtmpsCAFile) { broadcast, statuses in
            monitor.broadcastChanged(broadcast, statuses: statuses, hlsURL: VideoRoutes.hlsURL(base: publicBase, broadcast.id))
        }
        let captions = VideoCaptions(directory: configuration.dataDirectory + "/video/captions", hub: live.video,
                                     engine: live.audio.recordings.engine, maxVoices: configuration.captionsMaxVoices) { captions in
            monitor.captionsChanged(captions)
        }
        let bound = boundHTTP
        let renders = VideoRenders(directory: configuration.dataDirectory + "/video/renders", hub: live.video,
                                   browser: HeadlessBrowser.find(configured: configuration.chromium),
                                   script: Self.findWebRoot(configuration.webRoot) + "/video/render-publisher.js",
                                   maxRunning: configuration.rendersMax) {
            bound.value.withLock { $0 }.map { "ws://\($0.locallyReachable)/v1/realtime" }
        }
        live.video.onSessionEvent { [core] event in
            monitor.handle(event)
            switch event {
            case .streamCreated(_, let publisher):
                // Off the hub's reporting: the session's settings are a store read.
                Task {
                    if let session = try? core.videoSessions.get(id: publisher.sessionID), session.archiveMode == "always" {
                        await archives.startAutomatically(session)
                    }
                }
            case .sessionDestroyed(let sessionID, _):
                captions.sessionEnded(sessionID)
                Task { await archives.sessionEnded(sessionID) }
                Task { await broadcasts.sessionEnded(sessionID) }
            default: break
            }
        }
        VideoRoutes(core: core, hub: live.video, group: group,
                    sip: lineMedia.edge.map { VideoSIPEdge(edge: $0, pool: lineMedia.pool, host: lineMedia.host, silenceLimit: lineMedia.silenceLimit) },
                    archives: archives, broadcasts: broadcasts, captions: captions, renders: renders)
            .register(on: &router)
        if configuration.development {
            VideoPlaygroundRoutes(core: core, account: account.0, broadcasts: broadcasts, captions: captions, renders: renders).register(on: &router)
        }
        webhooks = WebhookDispatcher(client: HTTPClient(group: group), applications: core.applications)
        core.conversations.bus.add(webhooks)
        DiagnosticsRoutes().register(on: &router)
        if configuration.development {
            MediaTestRoutes(bench: live.bench).register(on: &router)
            if let shiftedClock { ClockTestRoutes(clock: shiftedClock).register(on: &router) }
        }
        RoomSignaling(rooms: live.rooms, clients: clients).register(on: gateway, bus: core.conversations.bus)
        if configuration.development {
            RoomMediaDemoApp(core: core, apiKey: account.0.apiKey, dataDirectory: configuration.dataDirectory).register(on: &router)
        }
        phoneDemo = configuration.development
            ? PhoneDemoApp(core: core, apiKey: account.0.apiKey, dataDirectory: configuration.dataDirectory,
                           testNumber: sip != nil && SIPService.runsTestPhone(development: true) ? TestPhone.number : nil) : nil
        phoneDemo?.register(on: &router)
        WebRoutes(root: Self.findWebRoot(configuration.webRoot)).register(on: &router)
        linkBase = LinkBaseMiddleware(publicURL: configuration.publicURL)
        let app = HTTPApplication(router: router, middleware: [RequestIDMiddleware(), AccessLogMiddleware(), CORSMiddleware(), linkBase,
                                                                 AuthMiddleware(authenticator: authenticator)])
        var httpConfiguration = HTTPServerConfiguration()
        httpConfiguration.maxConnections = configuration.maxConnections
        httpConfiguration.maxConnectionsPerAddress = configuration.maxConnectionsPerAddress
        http = HTTPServer(group: group, configuration: httpConfiguration, responder: app, work: work)
    }

    /// Binds the listeners; returns the bound addresses.
    @discardableResult
    public func start() throws -> (http: SocketAddress, https: SocketAddress?) {
        startServices()
        let h = try http.listen(configuration.listen) { address in
            linkBase.listening(address, secure: false)
            phoneDemo?.listening(on: address)
        }
        var s: SocketAddress?
        var caFile: String?
        if let httpsAddress = configuration.https {
            let (context, dev) = try serverCertificate()
            caFile = dev
            s = try http.listen(httpsAddress, tls: context) { linkBase.listening($0, secure: true) }
        }
        started.withLock { $0 = (h, s, caFile ?? $0.caFile) }
        boundHTTP.value.withLock { $0 = h }
        return (h, s)
    }

    /// The server's certificate, one for HTTPS and SIP over TLS: `--tls-cert`/`--tls-key`, else the development
    /// certificate (made on first use in the data directory; its CA file returned). Loaded once.
    func serverCertificate() throws -> (TLSContext, developmentCA: String?) {
        try certificate.withLock { loaded in
            if let loaded { return loaded }
            let selected: (TLSContext, developmentCA: String?)
            if let cert = configuration.tlsCertificate, let key = configuration.tlsKey {
                selected = (try TLSContext(certificateFile: cert, keyFile: key), nil)
            } else {
                var hosts = ["localhost", "127.0.0.1", "::1"]
                for host in [configuration.https?.host, sip?.host].compactMap({ $0 })
                where host != "0.0.0.0" && host != "::" && !hosts.contains(host) {
                    hosts.append(host)
                }
                if let name = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init), !hosts.contains(name) {
                    hosts.append(name)
                }
                let (dev, created) = try DevelopmentCertificate.ensure(in: configuration.dataDirectory, hosts: hosts)
                if created { logger.info("generated a development CA for HTTPS and SIP over TLS", ["ca": dev.caFile]) }
                selected = (try TLSContext(certificateFile: dev.certificateFile, keyFile: dev.keyFile), dev.caFile)
            }
            loaded = selected
            return selected
        }
    }

    /// The gateway, the webhook queues and the sweeper: started once, by whichever of `startSIP` and `start` runs first.
    func startServices() {
        guard servicesStarted.withLock({ started in defer { started = true }; return !started }) else { return }
        gateway.start()
        webhooks.start()
        voiceWebhooks.start()
        videoCallbacks.start()
        // Legs a previous run left open cannot be running now.
        if let ended = try? core.calls.failInterrupted(), !ended.isEmpty { logger.info("ended interrupted calls", ["count": ended.count]) }
        let conversations = core.conversations
        sweeper.withLock { $0 = Task {
            // Conversations with a ttl disappear once they have had no member for that long.
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                _ = try? conversations.sweepExpired()
            }
        } }
    }

    /// Starts the SIP edge; returns where it listens, or nil when SIP is off (or the default port was busy).
    /// `serve` calls it before `start`, so a server that answers HTTP already has its SIP port (or has exited).
    @discardableResult
    public func startSIP() async throws -> SocketAddress? {
        guard let sip else { return nil }
        startServices()
        var tls: SIPTLSConfig?
        if let (port, required) = configuration.effectiveSIPTLSPort {
            let (server, dev) = try serverCertificate()
            if let dev { started.withLock { $0.caFile = dev } }
            let client = try TLSContext(clientCAFile: configuration.sipTLSCAFile, verify: true, systemStore: true)
            tls = SIPTLSConfig(port: port, server: server, client: client, required: required)
        }
        do {
            let port = try await sip.start(metrics: .shared, development: configuration.development, inbound: lineMedia, apiKey: account.0.apiKey,
                                           tls: tls)
            sipStarted.withLock { $0 = true }
            return SocketAddress(host: sipHostForDisplay, port: port)
        } catch {
            if configuration.sipPortRequired { throw error }
            logger.warning("SIP is off: the default port could not be bound (give --sip-port to choose one, 0 to silence this)",
                           ["port": "\(configuration.sipPort)", "error": "\(error)"])
            return nil
        }
    }

    var sipHostForDisplay: String { Self.sipHost(configuration) }

    /// Where SIP over TLS listens; nil when it is off or `startSIP` has not run.
    public var sipTLSAddress: SocketAddress? {
        guard sipStarted.withLock({ $0 }), let port = sip?.edge.tlsPort else { return nil }
        return SocketAddress(host: sipHostForDisplay, port: port)
    }

    /// SIP binds where HTTP listens unless told otherwise; a wildcard listener binds SIP on loopback
    /// (Via and Contact need a concrete address: give --sip-address).
    static func sipHost(_ c: ServerConfiguration) -> String {
        c.sipAddress ?? (c.listen.host == "0.0.0.0" || c.listen.host == "::" ? "127.0.0.1" : c.listen.host)
    }

    /// Connections the server accepts at once.
    public var connectionLimit: Int { http.connectionLimit }

    public var developmentCAFile: String? { started.withLock { $0.caFile } }

    /// Graceful stop: refuse new connections, finish in-flight requests, close WebSockets with 1001.
    public func shutdown() async {
        gateway.stop()
        sweeper.withLock { $0?.cancel() }
        webhooks.stop()
        if let sip, sipStarted.withLock({ $0 }) { await sip.stop() }
        voiceWebhooks.stop()
        videoCallbacks.stop()
        await http.shutdown(gracePeriod: configuration.shutdownGrace)
        group.shutdown()
        work.shutdown()
        media.shutdown()
    }

    static func findWebRoot(_ configured: String?) -> String {
        if let configured { return configured }
        let fm = FileManager.default
        if fm.fileExists(atPath: "Web") { return fm.currentDirectoryPath + "/Web" }
        // .build/<config>/switchboard → repository root/Web
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("Web").path
            if fm.fileExists(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return fm.currentDirectoryPath + "/Web"
    }
}

import Synchronization

/// An address known once a listener is bound.
final class BoundAddress: Sendable {
    let value = Mutex<SocketAddress?>(nil)
}
