import CShims
import Foundation
import Glibc
import Synchronization
import Wire

/// A headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: the browser reads
/// commands from its descriptor 3 and writes answers and events to its descriptor 4, each a JSON message ended by a
/// NUL byte), so no debugging port is open to other users of the machine. One browser per Experience Composer.
///
/// `send` waits for a command's answer; events go to `onEvent` from the reading thread. When the browser exits (or
/// is stopped) every waiting command fails and `exited` is set.
final class HeadlessBrowser: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let pid: pid_t
    private let commands: Int32
    private let answers: Int32
    private let profile: String
    private struct State {
        var nextID = 1
        var waiting: [Int: CheckedContinuation<JSONValue, any Error>] = [:]
        var exited = false
        var onEvent: (@Sendable (_ method: String, _ params: JSONValue, _ session: String?) -> Void)?
    }
    private let state = Mutex(State())
    private let writing = Mutex(())

    /// Starts `executable` (a path, or a name looked up in `PATH`) on an empty profile in `profile` (removed when the
    /// browser is stopped), its window `width` × `height`; `secure` origins (`http://host:port`) are treated as
    /// secure contexts, where a page may capture itself.
    init(executable: String, profile: String, width: Int, height: Int, secure: [String] = []) throws(Failure) {
        var toBrowser: [Int32] = [0, 0], fromBrowser: [Int32] = [0, 0]
        guard sb_pipe_cloexec(&toBrowser) == 0 else { throw Failure(description: "pipe: \(String(cString: strerror(errno)))") }
        guard sb_pipe_cloexec(&fromBrowser) == 0 else {
            close(toBrowser[0]); close(toBrowser[1])
            throw Failure(description: "pipe: \(String(cString: strerror(errno)))")
        }
        try? FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        let argv = [executable, "--headless", "--remote-debugging-pipe", "--user-data-dir=\(profile)", "--window-size=\(width),\(height)",
                    "--no-first-run", "--no-default-browser-check", "--disable-background-networking", "--disable-sync",
                    "--disable-extensions", "--disable-default-apps", "--hide-scrollbars", "--autoplay-policy=no-user-gesture-required",
                    "--auto-accept-this-tab-capture", "--allow-loopback-in-peer-connection",
                    // A screen larger than any window a render asks for (windows are kept within it).
                    "--screen-info={0,0 3840x3840}"]
            + (getuid() == 0 ? ["--no-sandbox"] : [])
            + (secure.isEmpty ? [] : ["--unsafely-treat-insecure-origin-as-secure=" + secure.joined(separator: ",")]) + ["about:blank"]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toBrowser[0], 3)
        posix_spawn_file_actions_adddup2(&actions, fromBrowser[1], 4)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group, so stopping it stops its helper processes too.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for a in cArguments { free(a) } }
        var child: pid_t = 0
        let spawned = posix_spawnp(&child, executable, &actions, &attributes, &cArguments, environ)
        close(toBrowser[0])
        close(fromBrowser[1])
        guard spawned == 0 else {
            close(toBrowser[1]); close(fromBrowser[0])
            throw Failure(description: "\(executable) could not be started: \(String(cString: strerror(spawned)))")
        }
        pid = child
        commands = toBrowser[1]
        answers = fromBrowser[0]
        self.profile = profile
        let thread = Thread { [self] in readAnswers() }
        thread.name = "switchboard.render.\(child)"
        thread.start()
    }

    deinit {
        close(commands)
        close(answers)
    }

    var exited: Bool { state.withLock { $0.exited } }

    func onEvent(_ handle: @escaping @Sendable (_ method: String, _ params: JSONValue, _ session: String?) -> Void) {
        state.withLock { $0.onEvent = handle }
    }

    /// Sends a command (to the page `session` is attached to, or to the browser) and returns its result; throws its
    /// error, or `Failure` once the browser has gone.
    @discardableResult
    func send(_ method: String, _ params: JSONValue = [:], session: String? = nil) async throws -> JSONValue {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<JSONValue, any Error>) in
            let id = state.withLock { s -> Int? in
                guard !s.exited else { return nil }
                defer { s.nextID += 1 }
                s.waiting[s.nextID] = done
                return s.nextID
            }
            guard let id else { return done.resume(throwing: Failure(description: "the browser has exited")) }
            var message: [String: JSONValue] = ["id": .number(Double(id)), "method": .string(method), "params": params]
            if let session { message["sessionId"] = .string(session) }
            let bytes = Array(RealtimeGateway.encode(.object(message)).utf8) + [0]
            let written = writing.withLock { _ in Self.writeAll(commands, bytes) }
            if !written, let waiting = state.withLock({ $0.waiting.removeValue(forKey: id) }) {
                waiting.resume(throwing: Failure(description: "the browser has exited"))
            }
        }
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }

    /// The reading thread: each NUL-ended message is an answer (by `id`) or an event, until the pipe closes.
    private func readAnswers() {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(answers, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            pending += buffer[..<n]
            while let end = pending.firstIndex(of: 0) {
                let message = try? JSONParser.parse(Array(pending[..<end]))
                pending.removeSubrange(...end)
                if let message { deliver(message) }
            }
            // A message is never this large; a browser that sends one is not one to trust.
            if pending.count > 16 << 20 { break }
        }
        let waiting = state.withLock { s -> [CheckedContinuation<JSONValue, any Error>] in
            s.exited = true
            defer { s.waiting = [:] }
            return Array(s.waiting.values)
        }
        for w in waiting { w.resume(throwing: Failure(description: "the browser has exited")) }
    }

    private func deliver(_ message: JSONValue) {
        if let id = message["id"]?.intValue {
            guard let waiting = state.withLock({ $0.waiting.removeValue(forKey: id) }) else { return }
            if let error = message["error"] {
                waiting.resume(throwing: Failure(description: error["message"]?.stringValue ?? "\(error)"))
            } else {
                waiting.resume(returning: message["result"] ?? [:])
            }
        } else if let method = message["method"]?.stringValue, let handle = state.withLock({ $0.onEvent }) {
            handle(method, message["params"] ?? [:], message["sessionId"]?.stringValue)
        }
    }

    /// Stops the browser and its helpers (SIGTERM, then SIGKILL after two seconds), reaps it and removes its profile.
    func stop() async {
        kill(-pid, SIGTERM)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(2)
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            if clock.now >= deadline {
                kill(-pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                break
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        try? FileManager.default.removeItem(atPath: profile)
    }

    /// The executable to run: `configured` when given, else the first of Debian's `chromium` and the usual other
    /// names found in `PATH`; nil when there is none.
    static func find(configured: String?) -> String? {
        if let configured { return configured }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            for dir in path.split(separator: ":") where access("\(dir)/\(name)", X_OK) == 0 { return "\(dir)/\(name)" }
        }
        return nil
    }
}
