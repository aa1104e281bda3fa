import Crypto
import Foundation
import Live
import Platform
import Runtime
import Synchronization
import Wire

/// Experience Composer (`POST /v2/project/{id}/render`): a web page rendered by a headless Chromium of the server's
/// own and published into a routed video session as a stream, picture and sound, that clients subscribe to as to any
/// other (and archives and broadcasts compose). The page is loaded as it is, top level; a script the server puts into
/// it (`Web/video/render-publisher.js`) captures its own tab once it has loaded and publishes it with the render's
/// token over the realtime gateway, and tells the server its stream id through a DevTools binding.
///
/// A render is `starting` until its stream is published (`started`, with `streamId`), then runs until it is stopped
/// (`DELETE`), its `maxDuration` passes, the session has had no other client for a minute, its stream goes (its
/// connection forced out), or the browser exits; then `stopped` (with `reason`), or `failed` when it never started or
/// its browser died. Each render is a JSON file under `directory`, written before the start is acknowledged and at
/// every change (read back once, at start); one a stopped server left `starting` or `started` is `failed` then.
/// At most `maxRunning` run at once (a browser each: about half a gigabyte, and 0.6 to 1.2 cores for a page
/// that changes every frame at 480p to 720p; docs/benchmarks.md, "Experience Composer").
final class VideoRenders: Sendable {
    struct Render: Codable, Sendable, Equatable {
        enum Status: String, Codable, Sendable { case starting, started, stopped, failed }
        var id: String
        var sessionID: String
        var projectID: String
        var url: String
        var resolution: String
        var name: String?
        var maxDuration: Int
        var createdAt: Int64
        var updatedAt: Int64
        var status = Status.starting
        var streamID: String?
        var reason: String?

        /// The REST shape, as the `opentok` (`projectId`) and `vonage` (`applicationId`) SDKs read it.
        var json: [String: Any] {
            var o: [String: Any] = ["id": id, "sessionId": sessionID, "projectId": projectID, "applicationId": projectID, "url": url,
                                    "resolution": resolution, "createdAt": createdAt, "updatedAt": updatedAt, "status": status.rawValue]
            if let name { o["name"] = name }
            if let streamID { o["streamId"] = streamID }
            if let reason { o["reason"] = reason }
            return o
        }
    }

    /// A start's fields, checked whole before anything starts.
    struct Request: Equatable {
        var sessionID: String
        var token: String
        var url: String
        var maxDuration = 7_200
        var resolution = "1280x720"
        var name: String?

        static let durations = 60...36_000
        static let resolutions = ["640x480", "480x640", "1280x720", "720x1280", "1920x1080", "1080x1920"]

        init(_ body: JSONValue) throws(APIError) {
            guard let sessionID = body["sessionId"]?.stringValue, !sessionID.isEmpty else { throw .badRequest("sessionId is required.") }
            guard let token = body["token"]?.stringValue, !token.isEmpty else { throw .badRequest("token is required.") }
            guard let url = body["url"]?.stringValue, (15...2048).contains(url.count), Application.isWebAddress(url) else {
                throw .badRequest("url must be an http(s) URL of 15 to 2048 characters.")
            }
            (self.sessionID, self.token, self.url) = (sessionID, token, url)
            switch body["maxDuration"] {
            case nil, .null?: break
            case .number(let n)? where n == n.rounded() && Self.durations.contains(Int(n)): maxDuration = Int(n)
            default: throw .badRequest("maxDuration must be a whole number of seconds from 60 to 36000.")
            }
            switch body["resolution"] {
            case nil, .null?: break
            case .string(let r)? where Self.resolutions.contains(r): resolution = r
            default: throw .badRequest("resolution must be one of \(Self.resolutions.joined(separator: ", ")).")
            }
            switch body["properties"] {
            case nil, .null?: break
            case .object(let properties)?:
                switch properties["name"] {
                case nil, .null?: break
                case .string(let n)? where (1...200).contains(n.count): name = n
                default: throw .badRequest("properties.name must be 1 to 200 characters.")
                }
            default: throw .badRequest("properties must be an object.")
            }
        }

        var size: (width: Int, height: Int) {
            let parts = resolution.split(separator: "x").compactMap { Int($0) }
            return (parts[0], parts[1])
        }
    }

    private struct State {
        /// Every render, running or ended, by id: read from `directory` once, at start, and kept as it changes.
        var renders: [String: Render] = [:]
        /// The running ones.
        var running: Set<String> = []
        /// Why a running render should stop, once it is asked to.
        var stopAsked: [String: String] = [:]
    }
    private let state = Mutex(State())
    let directory: String
    let maxRunning: Int
    let hub: VideoHub
    /// The browser to run (`--chromium`), nil when none was found.
    let browser: String?
    /// The realtime gateway's address as the rendering browser reaches it (`ws://127.0.0.1:8080/v1/realtime`), once
    /// the server listens.
    let realtime: @Sendable () -> String?
    /// The publisher script's file (`Web/video/render-publisher.js`).
    let script: String
    /// How long the session may have no other client before a render stops.
    let alone: Duration
    let logger = Logger(label: "render")

    init(directory: String, hub: VideoHub, browser: String?, script: String, maxRunning: Int, alone: Duration = .seconds(60),
         realtime: @escaping @Sendable () -> String?) {
        self.directory = directory
        self.hub = hub
        self.browser = browser
        self.script = script
        self.maxRunning = maxRunning
        self.alone = alone
        self.realtime = realtime
        var renders: [String: Render] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.hasSuffix(".json") {
            guard var render = FileManager.default.contents(atPath: directory + "/" + name).flatMap({ try? JSONDecoder().decode(Render.self, from: $0) })
            else { continue }
            if render.status == .starting || render.status == .started {
                render.status = .failed
                render.reason = "The server stopped while rendering."
                render.updatedAt = VideoArchives.millis()
                _ = VideoArchives.saveJSON(render, id: render.id, directory: directory)
                try? FileManager.default.removeItem(atPath: Self.profile(render.id))
            }
            renders[render.id] = render
        }
        state.withLock { $0.renders = renders }
    }

    /// The browser profile of a render: an empty one in the temporary directory, removed when the render ends.
    private static func profile(_ id: String) -> String { NSTemporaryDirectory() + "switchboard-render-" + id }

    /// Renders running now, for `/metrics`.
    var count: Int { state.withLock { $0.running.count } }

    /// Starts rendering `ask.url` into `ask.sessionID` (checked by the caller: a routed session of `project`, and a
    /// token that may publish in it). 501 without a browser, 503 at `maxRunning` or when it cannot be saved.
    func start(_ ask: Request, project: String) throws(APIError) -> Render {
        guard let browser else {
            throw APIError(status: 501, code: "render-unavailable", title: "Not Implemented",
                           detail: "Experience Composer needs Chromium on the server: install the chromium package, or name it with --chromium.")
        }
        let now = VideoArchives.millis()
        let render = Render(id: UUID4.generate(), sessionID: ask.sessionID, projectID: project, url: ask.url, resolution: ask.resolution,
                            name: ask.name, maxDuration: ask.maxDuration, createdAt: now, updatedAt: now)
        let started = state.withLock { s -> Bool in
            guard s.running.count < maxRunning else { return false }
            s.renders[render.id] = render
            s.running.insert(render.id)
            return true
        }
        guard started else {
            throw .unavailable("\(maxRunning) Experience Composers are running, as many as this server runs at once (--renders-max); stop one first.")
        }
        guard VideoArchives.saveJSON(render, id: render.id, directory: directory) else {
            state.withLock { s in
                s.renders[render.id] = nil
                s.running.remove(render.id)
            }
            throw .unavailable("The render could not be saved, so it was not started.")
        }
        Task.detached { [self] in await self.run(render, ask: ask, browser: browser) }
        return render
    }

    /// Asks a running render of `project` to stop; false when there is none with that id (or it is already stopping).
    func stop(id: String, project: String) -> Bool {
        state.withLock { s in
            guard s.running.contains(id), s.renders[id]?.projectID == project, s.stopAsked[id] == nil else { return false }
            s.stopAsked[id] = "Stopped by the user."
            return true
        }
    }

    /// A render of `project`, running or ended.
    func get(id: String, project: String) -> Render? {
        state.withLock { $0.renders[id] }.flatMap { $0.projectID == project ? $0 : nil }
    }

    /// Why a running render should stop, once asked.
    private func stopAsked(_ id: String) -> String? { state.withLock { $0.stopAsked[id] } }

    /// The project's renders, newest first: `count` of them from `offset`, and how many there are.
    func list(project: String, offset: Int, count: Int) -> (total: Int, items: [Render]) {
        let all = state.withLock { $0.renders.values.filter { $0.projectID == project } }
            .sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
        return (all.count, Array(all.dropFirst(offset).prefix(count)))
    }

    /// A status change: kept and saved; `ended`, the render runs no more.
    private func update(_ render: Render, ended: Bool = false) {
        state.withLock { s in
            s.renders[render.id] = render
            if ended {
                s.running.remove(render.id)
                s.stopAsked[render.id] = nil
            }
        }
        _ = VideoArchives.saveJSON(render, id: render.id, directory: directory)
    }

    /// One render from its browser's start to its end.
    private func run(_ first: Render, ask: Request, browser executable: String) async {
        var render = first
        let starting = Starting()
        let clock = ContinuousClock()
        let (width, height) = ask.size
        var browser: HeadlessBrowser?
        var connectionID: String?
        do {
            guard let realtime = realtime() else { throw HeadlessBrowser.Failure(description: "the server is not listening yet") }
            guard let source = FileManager.default.contents(atPath: script).map({ String(decoding: $0, as: UTF8.self) }) else {
                throw HeadlessBrowser.Failure(description: "the publisher script \(script) cannot be read")
            }
            let config: JSONValue = ["realtime": .string(realtime), "sessionId": .string(ask.sessionID), "token": .string(ask.token),
                                     "name": .string(ask.name ?? ""), "width": .number(Double(width)), "height": .number(Double(height))]
            // A page over plain HTTP is not a secure context, where alone a page may capture itself: its origin is made one.
            let origin = URL(string: ask.url).flatMap { u in u.scheme == "http" ? u.host.map { "http://\($0)" + (u.port.map { ":\($0)" } ?? "") } : nil }
            let opened = try HeadlessBrowser(executable: executable, profile: Self.profile(render.id), width: width, height: height,
                                             secure: origin.map { [$0] } ?? [])
            browser = opened
            // Starting is bounded whatever the page does (a server that never answers holds `Page.navigate`): unless the
            // page has published by then, the browser is stopped 30 s after it started, or as soon as the render is asked
            // to stop, and what was waiting on it fails.
            let watchdog = Task { [self, id = render.id] in
                let limit = ContinuousClock.now + .seconds(30)
                while !Task.isCancelled {
                    if let asked = stopAsked(id) {
                        if starting.end(asked, failed: false) { await opened.stop() }
                        return
                    }
                    if ContinuousClock.now >= limit {
                        if starting.end("the page did not publish within 30 s", failed: true) { await opened.stop() }
                        return
                    }
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
            defer { watchdog.cancel() }
            let reports = Reports()
            opened.onEvent { method, params, _ in
                if method == "Runtime.bindingCalled", params["name"]?.stringValue == "switchboardRender",
                   let payload = params["payload"]?.stringValue, let what = try? JSONParser.parse(payload) {
                    reports.add(what)
                }
            }
            let (targetID, page) = try await Self.openPage(in: opened, url: ask.url, publisher: "(\(source))(\(RealtimeGateway.encode(config)));")
            /// A report of the page's: its stream (taken, and true) or why it could not publish (thrown).
            func take(_ report: JSONValue) async throws -> Bool {
                if let error = report["error"]?.stringValue { throw HeadlessBrowser.Failure(description: "the page could not publish: \(error)") }
                // Only a stream the page did publish in the session is taken (the page's own scripts can call the binding too).
                guard let streamID = report["streamId"]?.stringValue,
                      hub.streams(sessionID: render.sessionID).contains(where: { $0.id == streamID }) else { return false }
                connectionID = report["connectionId"]?.stringValue
                // Capturing its tab puts the browser's "sharing this tab" bar above the page: the window grows by it.
                try await Self.fitWindow(opened, target: targetID, page: page, width: width, height: height)
                render.status = .started
                render.streamID = streamID
                render.updatedAt = VideoArchives.millis()
                update(render)
                logger.info("render published", ["id": render.id, "session": render.sessionID, "stream": streamID])
                return true
            }
            // The page publishes once it has loaded: its stream id, or why not (the watchdog bounds the wait).
            var published = false
            while !published {
                if opened.exited { throw HeadlessBrowser.Failure(description: "the browser exited") }
                try await Task.sleep(for: .milliseconds(50))
                if let report = reports.next() { published = try await take(report) }
            }
            guard starting.published() else { throw HeadlessBrowser.Failure(description: "the render ended while starting") }

            // Running: until asked, the maximum duration, a minute alone in the session, its stream gone (for 10 s: a
            // page that loads anew publishes anew, and its new stream is the render's), or the browser gone.
            let deadline = clock.now + .seconds(render.maxDuration)
            var aloneSince: ContinuousClock.Instant?
            var goneSince: ContinuousClock.Instant?
            var reason = "Max duration exceeded."
            while clock.now < deadline {
                if let asked = stopAsked(render.id) { reason = asked; break }
                if opened.exited { throw HeadlessBrowser.Failure(description: "the browser exited") }
                if let again = reports.next() { _ = try await take(again) }
                if hub.streams(sessionID: render.sessionID).contains(where: { $0.id == render.streamID }) {
                    goneSince = nil
                } else if let since = goneSince {
                    if clock.now - since >= .seconds(10) { reason = "The render's stream was unpublished."; break }
                } else {
                    goneSince = clock.now
                }
                let others = hub.connections(sessionID: render.sessionID).contains { $0.id != connectionID }
                if others { aloneSince = nil } else if aloneSince == nil { aloneSince = clock.now }
                if let since = aloneSince, clock.now - since >= alone { reason = "The session has had no other client for a while."; break }
                try? await Task.sleep(for: .milliseconds(250))
            }
            render.status = .stopped
            render.reason = reason
        } catch {
            // Stopped while starting (asked, or too long), or failed.
            let (why, failed) = starting.ended ?? ("\(error)", true)
            render.status = failed ? .failed : .stopped
            render.reason = why
            if failed { logger.warning("render failed", ["id": render.id, "reason": why]) }
        }
        // Its connection leaves before the browser goes, so clients see a clean unpublish.
        if let connectionID { hub.disconnect(sessionID: render.sessionID, connectionID: connectionID, reason: .clientDisconnected) }
        await browser?.stop()
        render.updatedAt = VideoArchives.millis()
        update(render, ended: true)
    }

    /// Opens a page in `browser` and loads `url` in it, `publisher` (the script and its settings) put in before the
    /// page's own scripts, with the `switchboardRender` binding it reports through; returns the page's target id and
    /// DevTools session.
    private static func openPage(in browser: HeadlessBrowser, url: String, publisher: String) async throws -> (target: String, page: String) {
        let target = try await browser.send("Target.createTarget", ["url": "about:blank"])
        guard let targetID = target["targetId"]?.stringValue else { throw HeadlessBrowser.Failure(description: "no page") }
        let attached = try await browser.send("Target.attachToTarget", ["targetId": .string(targetID), "flatten": true])
        guard let page = attached["sessionId"]?.stringValue else { throw HeadlessBrowser.Failure(description: "no page session") }
        try await browser.send("Page.enable", session: page)
        try await browser.send("Runtime.enable", session: page)
        try await browser.send("Page.setBypassCSP", ["enabled": true], session: page)
        try await browser.send("Runtime.addBinding", ["name": "switchboardRender"], session: page)
        try await browser.send("Page.addScriptToEvaluateOnNewDocument", ["source": .string(publisher)], session: page)
        let navigated = try await browser.send("Page.navigate", ["url": .string(url)], session: page)
        if let error = navigated["errorText"]?.stringValue { throw HeadlessBrowser.Failure(description: "\(url) could not be loaded: \(error)") }
        return (targetID, page)
    }

    /// Sizes the page's window so that the page itself — what its tab capture sends — is `width` × `height`: the
    /// window is the page plus the browser's own frame and bars, even headless, so it grows by what the page lacks
    /// (up to three times: the browser may settle a size of its own first).
    private static func fitWindow(_ browser: HeadlessBrowser, target: String, page: String, width: Int, height: Int) async throws {
        let window = try await browser.send("Browser.getWindowForTarget", ["targetId": .string(target)])
        guard let windowID = window["windowId"]?.intValue else { return }
        func pageSize() async throws -> [Int] {
            let inner = try await browser.send("Runtime.evaluate", ["expression": "[innerWidth, innerHeight]", "returnByValue": true], session: page)
            return inner["result"]?["value"]?.arrayValue?.compactMap(\.intValue) ?? []
        }
        var size = try await pageSize()
        for _ in 0..<3 {
            guard size.count == 2, size != [width, height] else { return }
            let bounds = try await browser.send("Browser.getWindowBounds", ["windowId": .number(Double(windowID))])
            guard let w = bounds["bounds"]?["width"]?.intValue, let h = bounds["bounds"]?["height"]?.intValue else { return }
            try await browser.send("Browser.setWindowBounds", ["windowId": .number(Double(windowID)), "bounds": [
                "width": .number(Double(w + width - size[0])), "height": .number(Double(h + height - size[1])),
            ]])
            // The page takes its new size a little later.
            let before = size
            for _ in 0..<20 where size == before {
                try await Task.sleep(for: .milliseconds(50))
                size = try await pageSize()
            }
        }
    }
}

/// What the rendered page reports through its binding (its stream, or why it could not publish), oldest first.
private final class Reports: Sendable {
    private let queue = Mutex<[JSONValue]>([])
    func add(_ report: JSONValue) { queue.withLock { $0.append(report) } }
    func next() -> JSONValue? { queue.withLock { $0.isEmpty ? nil : $0.removeFirst() } }
}

/// How a render's start ended: published, or ended first (by the watchdog: asked to stop, or too long) — whichever
/// came first.
private final class Starting: Sendable {
    private let state = Mutex<(published: Bool, ended: (why: String, failed: Bool)?)>((false, nil))
    /// The page published; false when the start had already ended.
    func published() -> Bool {
        state.withLock { s in
            guard s.ended == nil else { return false }
            s.published = true
            return true
        }
    }
    /// Ends the start unless the page has published; true when it did end it.
    func end(_ why: String, failed: Bool) -> Bool {
        state.withLock { s in
            guard !s.published, s.ended == nil else { return false }
            s.ended = (why, failed)
            return true
        }
    }
    var ended: (why: String, failed: Bool)? { state.withLock { $0.ended } }
}
