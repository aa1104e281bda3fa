import Foundation
import Platform
import Runtime

/// Every setting of `switchboard serve`: a flag, an environment variable, and a key of the optional JSON config file.
public struct ServerConfiguration: Sendable {
    public var listen = SocketAddress(host: "127.0.0.1", port: 8080)
    /// HTTPS listener; with no certificate configured, a development CA + certificate is generated.
    public var https: SocketAddress? = nil
    public var dataDirectory = "./.switchboard"
    public var tlsCertificate: String? = nil
    public var tlsKey: String? = nil
    public var webRoot: String? = nil
    public var logLevel: Logger.Level = .info
    public var logFormat: Logger.Format = .logfmt
    public var threads = max(1, ProcessInfo.processInfo.activeProcessorCount)
    public var shutdownGrace: Duration = .seconds(10)
    /// Public base URL (for links in responses); defaults to the HTTP listener.
    public var publicURL: String? = nil
    /// How often the realtime gateway pings; two missed pongs end a session.
    public var realtimePingInterval: Duration = .seconds(15)
    /// Seconds a realtime WebSocket may stay open without logging in (or connecting to a video session).
    public var realtimeLoginTimeout: Duration = .seconds(10)
    /// Connections open at once; 0: the descriptor limit less a reserve.
    public var maxConnections = 0
    /// Connections open at once from one IP address; 0: no per-address limit.
    public var maxConnectionsPerAddress = 0
    /// First UDP port of the media workers (worker i uses port + i); 0 picks free ports.
    public var mediaPort: UInt16 = 10_000
    /// IP announced in ICE candidates (NAT or container address); default: the loopback/bind address.
    public var mediaAnnounce: String? = nil
    /// Nice value of the media worker threads; nil leaves them at the process's (`--media-nice inherit`).
    public var mediaNice: Int32? = -10
    /// Development mode: the built-in demo app servers (`/rooms/api/*`, `/video/api/*`), the media test
    /// routes (`/test/media/*`) and the media test hooks. Loopback listeners only.
    public var development = false
    /// SIP port (UDP and TCP); 0 turns the telephony edge off.
    public var sipPort: UInt16 = 5060
    /// Whether the SIP port was asked for (flag, environment or file): then a busy port is an error,
    /// while the default 5060 being busy only leaves SIP off with a warning.
    public var sipPortRequired = false
    /// SIP over TLS port (the server's certificate, as HTTPS); nil: the SIP port + 1 (5061 with the default 5060),
    /// where a busy port leaves TLS off with a warning; 0 turns TLS off.
    public var sipTLSPort: UInt16? = nil
    /// CA certificates (PEM) trusted for outbound SIP over TLS besides the system store (self-signed carriers).
    public var sipTLSCAFile: String? = nil
    /// Address SIP binds and puts in Via/Contact; default: the HTTP listener's host.
    public var sipAddress: String? = nil
    /// UDP ports for RTP legs (each leg takes an even port and the odd one above for RTCP).
    public var rtpPorts: ClosedRange<UInt16> = 20_000...29_999
    /// SIP overload shedding: calls up at once (0: no limit) and INVITEs unanswered at once past which new
    /// INVITEs get `503` with `Retry-After`.
    public var sipMaxCalls = 0
    public var sipMaxPendingInvites = 1000
    /// An answered RTP leg whose far end sends nothing (no RTP, no RTCP) this long while it should is hung
    /// up: a phone that vanished without a BYE. Zero: never.
    public var rtpTimeout: Duration = .seconds(60)
    /// The longest a video archive records, in seconds; an automatically archived session starts the next one.
    public var archiveMaxDuration = 14_400
    /// Voices live captions transcribe at once, every session together (each a decoder of its own, ~30 MiB, and a
    /// seventh of a core while it speaks).
    public var captionsMaxVoices = 64
    /// CA certificates (PEM) trusted for broadcasts' RTMPS servers instead of the system store.
    public var rtmpsCAFile: String? = nil
    /// STUN and TURN servers video clients are told to use (relayed sessions' browsers reach each other through them).
    public var iceServers = ICEServers.none
    /// The browser Experience Composers render pages in; nil: `chromium` (or another usual name) in `PATH`.
    public var chromium: String? = nil
    /// Experience Composers running at once (a headless browser each: half a gigabyte, and up to a core and more).
    public var rendersMax = ProcessInfo.processInfo.activeProcessorCount

    public init() {}

    /// The SIP-over-TLS port to bind (0: any free one) and whether it was asked for; nil when TLS is off.
    public var effectiveSIPTLSPort: (port: UInt16, required: Bool)? {
        guard sipPort != 0 else { return nil }
        if let sipTLSPort { return sipTLSPort == 0 ? nil : (sipTLSPort, true) }
        return sipPort == UInt16.max ? nil : (sipPort + 1, false)
    }

    /// One setting: its flag, environment variable and config-file key.
    public struct Setting: Sendable {
        public let flag: String
        public let env: String
        public let key: String
        public let help: String
    }

    public static let settings: [Setting] = [
        Setting(flag: "--listen", env: "SWITCHBOARD_LISTEN", key: "listen", help: "HTTP address (default 127.0.0.1:8080)"),
        Setting(flag: "--https", env: "SWITCHBOARD_HTTPS", key: "https", help: "HTTPS address, e.g. 127.0.0.1:8443 (off by default)"),
        Setting(flag: "--data", env: "SWITCHBOARD_DATA", key: "data", help: "data directory (default ./.switchboard)"),
        Setting(flag: "--tls-cert", env: "SWITCHBOARD_TLS_CERT", key: "tls_cert", help: "PEM certificate chain for HTTPS"),
        Setting(flag: "--tls-key", env: "SWITCHBOARD_TLS_KEY", key: "tls_key", help: "PEM private key for HTTPS"),
        Setting(flag: "--web", env: "SWITCHBOARD_WEB", key: "web", help: "web client directory (default: ./Web)"),
        Setting(flag: "--log-level", env: "SWITCHBOARD_LOG_LEVEL", key: "log_level", help: "debug|info|warn|error (default info)"),
        Setting(flag: "--log-format", env: "SWITCHBOARD_LOG_FORMAT", key: "log_format", help: "logfmt|json (default logfmt)"),
        Setting(flag: "--threads", env: "SWITCHBOARD_THREADS", key: "threads", help: "event-loop threads (default: one per core)"),
        Setting(flag: "--realtime-ping-interval", env: "SWITCHBOARD_REALTIME_PING_INTERVAL", key: "realtime_ping_interval", help: "seconds between realtime pings (default 15)"),
        Setting(flag: "--realtime-login-timeout", env: "SWITCHBOARD_REALTIME_LOGIN_TIMEOUT", key: "realtime_login_timeout", help: "seconds a realtime socket may stay unauthenticated (default 10)"),
        Setting(flag: "--max-connections", env: "SWITCHBOARD_MAX_CONNECTIONS", key: "max_connections", help: "connections open at once (default: descriptor limit - 64)"),
        Setting(flag: "--max-connections-per-address", env: "SWITCHBOARD_MAX_CONNECTIONS_PER_ADDRESS", key: "max_connections_per_address", help: "connections open at once from one IP (default 0: no limit)"),
        Setting(flag: "--public-url", env: "SWITCHBOARD_PUBLIC_URL", key: "public_url", help: "base URL clients use to reach the server"),
        Setting(flag: "--media-port", env: "SWITCHBOARD_MEDIA_PORT", key: "media_port", help: "first UDP media port (default 10000; 0 = any)"),
        Setting(flag: "--media-nice", env: "SWITCHBOARD_MEDIA_NICE", key: "media_nice", help: "nice value of the media worker threads, -20..19 (default -10: ahead of the rest; needs root or CAP_SYS_NICE, else they keep the process's), or inherit"),
        Setting(flag: "--media-announce", env: "SWITCHBOARD_MEDIA_ANNOUNCE", key: "media_announce", help: "IP announced in ICE candidates"),
        Setting(flag: "--sip-port", env: "SWITCHBOARD_SIP_PORT", key: "sip_port", help: "SIP port, UDP and TCP (default 5060; 0 = off)"),
        Setting(flag: "--sip-tls-port", env: "SWITCHBOARD_SIP_TLS_PORT", key: "sip_tls_port", help: "SIP over TLS port, with the HTTPS certificate (default: SIP port + 1; 0 = off)"),
        Setting(flag: "--sip-tls-ca", env: "SWITCHBOARD_SIP_TLS_CA", key: "sip_tls_ca", help: "PEM CA file trusted for outbound SIP over TLS besides the system store"),
        Setting(flag: "--sip-address", env: "SWITCHBOARD_SIP_ADDRESS", key: "sip_address", help: "SIP bind and contact address (default: the --listen host)"),
        Setting(flag: "--sip-max-calls", env: "SWITCHBOARD_SIP_MAX_CALLS", key: "sip_max_calls", help: "SIP calls up at once; new INVITEs past it get 503 (default 0: no limit)"),
        Setting(flag: "--sip-max-pending-invites", env: "SWITCHBOARD_SIP_MAX_PENDING_INVITES", key: "sip_max_pending_invites", help: "INVITEs not yet answered at once; new ones past it get 503 (default 1000)"),
        Setting(flag: "--rtp-ports", env: "SWITCHBOARD_RTP_PORTS", key: "rtp_ports", help: "UDP port range for RTP legs, LOW-HIGH (default 20000-29999)"),
        Setting(flag: "--rtp-timeout", env: "SWITCHBOARD_RTP_TIMEOUT", key: "rtp_timeout", help: "seconds an answered call's far end may send no RTP or RTCP before it is hung up (default 60; 0 = never)"),
        Setting(flag: "--captions-max-voices", env: "SWITCHBOARD_CAPTIONS_MAX_VOICES", key: "captions_max_voices", help: "voices live captions transcribe at once, all sessions together (default 64, 1-1000); a voice beyond it is captioned once another stops"),
        Setting(flag: "--archive-max-duration", env: "SWITCHBOARD_ARCHIVE_MAX_DURATION", key: "archive_max_duration", help: "seconds a video archive records at most, pauses not counted, before it stops (maximum duration exceeded; default and at most 14400)"),
        Setting(flag: "--ice-servers", env: "SWITCHBOARD_ICE_SERVERS", key: "ice_servers", help: "STUN and TURN servers video clients use, comma-separated stun:, turn: or turns: URIs (default none)"),
        Setting(flag: "--turn-secret", env: "SWITCHBOARD_TURN_SECRET", key: "turn_secret", help: "secret shared with the TURN servers (coturn's static-auth-secret), from which each client's TURN credential is made"),
        Setting(flag: "--chromium", env: "SWITCHBOARD_CHROMIUM", key: "chromium", help: "browser Experience Composers render pages in (default: chromium in PATH)"),
        Setting(flag: "--renders-max", env: "SWITCHBOARD_RENDERS_MAX", key: "renders_max", help: "Experience Composers running at once, a headless browser each (default: the number of cores, 1-100)"),
        Setting(flag: "--rtmps-ca", env: "SWITCHBOARD_RTMPS_CA", key: "rtmps_ca", help: "PEM CA file trusted for broadcasts' RTMPS servers instead of the system store"),
        Setting(flag: "--dev", env: "SWITCHBOARD_DEV", key: "dev", help: "development mode: demo app servers and test routes, loopback only (a flag; true|false in env/config)"),
    ]

    /// Settings given as a bare flag on the command line (no value).
    public static let booleanFlags: Set<String> = ["--dev"]

    /// Resolves settings: defaults < config file < environment < flags.
    public static func resolve(flags: [String: String], environment: [String: String]) throws -> ServerConfiguration {
        var values: [String: String] = [:]
        let configPath = flags["--config"] ?? environment["SWITCHBOARD_CONFIG"]
        if let configPath {
            guard let data = FileManager.default.contents(atPath: configPath),
                  let obj = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw ConfigurationError("cannot read config file \(configPath) (a JSON object is expected)")
            }
            for s in settings { if let v = obj[s.key] { values[s.key] = "\(v)" } }
            let known = Set(settings.map(\.key))
            if let unknown = obj.keys.first(where: { !known.contains($0) }) {
                throw ConfigurationError("unknown key '\(unknown)' in \(configPath)")
            }
        }
        for s in settings {
            if let v = environment[s.env], !v.isEmpty { values[s.key] = v }
            if let v = flags[s.flag] { values[s.key] = v }
        }
        var c = ServerConfiguration()
        if let v = values["listen"] {
            guard let a = SocketAddress(parsing: v) else { throw ConfigurationError("--listen: expected HOST:PORT, got '\(v)'") }
            c.listen = a
        }
        if let v = values["https"], !v.isEmpty {
            guard let a = SocketAddress(parsing: v) else { throw ConfigurationError("--https: expected HOST:PORT, got '\(v)'") }
            c.https = a
        }
        if let v = values["data"] { c.dataDirectory = v }
        c.tlsCertificate = values["tls_cert"]
        c.tlsKey = values["tls_key"]
        if (c.tlsCertificate == nil) != (c.tlsKey == nil) { throw ConfigurationError("--tls-cert and --tls-key go together") }
        c.webRoot = values["web"]
        if let v = values["log_level"] {
            guard let l = Logger.Level(name: v) else { throw ConfigurationError("--log-level: expected debug|info|warn|error") }
            c.logLevel = l
        }
        if let v = values["log_format"] {
            guard let f = Logger.Format(rawValue: v) else { throw ConfigurationError("--log-format: expected logfmt|json") }
            c.logFormat = f
        }
        if let v = values["threads"] {
            guard let n = Int(v), n > 0, n <= 256 else { throw ConfigurationError("--threads: expected a number 1-256") }
            c.threads = n
        }
        if let v = values["public_url"], !v.isEmpty {
            guard let url = URL(string: v), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil,
                  url.query == nil, url.fragment == nil else {
                throw ConfigurationError("--public-url: expected http(s)://HOST[:PORT][/PATH], got '\(v)'")
            }
            c.publicURL = v.hasSuffix("/") ? String(v.dropLast()) : v
        }
        if let v = values["realtime_login_timeout"] {
            guard let n = Double(v), n >= 0.1, n <= 3600 else { throw ConfigurationError("--realtime-login-timeout: expected seconds (0.1-3600)") }
            c.realtimeLoginTimeout = .milliseconds(Int(n * 1000))
        }
        if let v = values["max_connections"] {
            guard let n = Int(v), n >= 0 else { throw ConfigurationError("--max-connections: expected a count (0 = from the descriptor limit)") }
            c.maxConnections = n
        }
        if let v = values["max_connections_per_address"] {
            guard let n = Int(v), n >= 0 else { throw ConfigurationError("--max-connections-per-address: expected a count (0 = no limit)") }
            c.maxConnectionsPerAddress = n
        }
        if let v = values["realtime_ping_interval"] {
            guard let n = Double(v), n >= 0.1, n <= 3600 else { throw ConfigurationError("--realtime-ping-interval: expected seconds (0.1-3600)") }
            c.realtimePingInterval = .milliseconds(Int(n * 1000))
        }
        if let v = values["media_port"] {
            guard let port = UInt16(v) else { throw ConfigurationError("--media-port: expected 0-65535") }
            c.mediaPort = port
        }
        c.mediaAnnounce = values["media_announce"]
        if let v = values["media_nice"] {
            if v == "inherit" {
                c.mediaNice = nil
            } else {
                guard let n = Int32(v), (-20...19).contains(n) else { throw ConfigurationError("--media-nice: expected -20..19 or inherit") }
                c.mediaNice = n
            }
        }
        if let v = values["sip_port"] {
            guard let port = UInt16(v) else { throw ConfigurationError("--sip-port: expected 0-65535") }
            c.sipPort = port
            c.sipPortRequired = true
        }
        if let v = values["sip_tls_port"] {
            guard let port = UInt16(v) else { throw ConfigurationError("--sip-tls-port: expected 0-65535") }
            c.sipTLSPort = port
        }
        if let tls = c.sipTLSPort, tls != 0, tls == c.sipPort {
            throw ConfigurationError("--sip-tls-port: \(tls) is the SIP port (UDP and TCP); TLS needs a port of its own")
        }
        if let v = values["sip_tls_ca"], !v.isEmpty {
            guard FileManager.default.isReadableFile(atPath: v) else { throw ConfigurationError("--sip-tls-ca: cannot read '\(v)'") }
            c.sipTLSCAFile = v
        }
        if let v = values["sip_address"], !v.isEmpty {
            guard SocketAddress(parsing: v.contains(":") ? "[\(v)]:0" : "\(v):0") != nil else {
                throw ConfigurationError("--sip-address: expected an IP address, got '\(v)'")
            }
            c.sipAddress = v
        }
        if let v = values["sip_max_calls"] {
            guard let n = Int(v), n >= 0 else { throw ConfigurationError("--sip-max-calls: expected 0 or more, got '\(v)'") }
            c.sipMaxCalls = n
        }
        if let v = values["rtp_timeout"] {
            guard let n = Double(v), n == 0 || (1...86_400).contains(n) else { throw ConfigurationError("--rtp-timeout: expected seconds (1-86400, or 0 for never), got '\(v)'") }
            c.rtpTimeout = .milliseconds(Int(n * 1000))
        }
        if let v = values["rtmps_ca"], !v.isEmpty {
            guard FileManager.default.isReadableFile(atPath: v) else { throw ConfigurationError("--rtmps-ca: cannot read '\(v)'") }
            c.rtmpsCAFile = v
        }
        if let v = values["ice_servers"] {
            do { c.iceServers = try ICEServers(parsing: v, secret: values["turn_secret"]) } catch { throw ConfigurationError("--ice-servers: \(error)") }
        } else if values["turn_secret"] != nil {
            throw ConfigurationError("--turn-secret: there are no TURN servers (--ice-servers) to share it with")
        }
        if let v = values["chromium"], !v.isEmpty {
            guard access(v, X_OK) == 0 else { throw ConfigurationError("--chromium: '\(v)' is not an executable file") }
            c.chromium = v
        }
        if let v = values["renders_max"] {
            guard let n = Int(v), (1...100).contains(n) else { throw ConfigurationError("--renders-max: expected 1-100, got '\(v)'") }
            c.rendersMax = n
        }
        if let v = values["captions_max_voices"] {
            guard let n = Int(v), (1...1_000).contains(n) else { throw ConfigurationError("--captions-max-voices: expected 1-1000, got '\(v)'") }
            c.captionsMaxVoices = n
        }
        if let v = values["archive_max_duration"] {
            guard let n = Int(v), (3...14_400).contains(n) else { throw ConfigurationError("--archive-max-duration: expected seconds (3-14400), got '\(v)'") }
            c.archiveMaxDuration = n
        }
        if let v = values["sip_max_pending_invites"] {
            guard let n = Int(v), n >= 1 else { throw ConfigurationError("--sip-max-pending-invites: expected 1 or more, got '\(v)'") }
            c.sipMaxPendingInvites = n
        }
        if let v = values["rtp_ports"] {
            let parts = v.split(separator: "-")
            guard parts.count == 2, let low = UInt16(parts[0]), let high = UInt16(parts[1]), low >= 1024, low < high, low % 2 == 0 else {
                throw ConfigurationError("--rtp-ports: expected LOW-HIGH with an even LOW from 1024 and HIGH above it, got '\(v)'")
            }
            c.rtpPorts = low...high
        }
        if let v = values["dev"] {
            switch v.lowercased() {
            case "true", "1", "yes", "on": c.development = true
            case "false", "0", "no", "off", "": c.development = false
            default: throw ConfigurationError("--dev / SWITCHBOARD_DEV / dev: expected true or false, got '\(v)'")
            }
        }
        if c.development {
            // The demo routes hand out tokens to anyone who can reach them: never beyond this machine.
            if let sip = c.sipAddress, !SocketAddress.isLoopback(sip), c.sipPort != 0 {
                throw ConfigurationError("--dev listens on loopback only; --sip-address is \(sip)")
            }
            for (flag, address) in [("--listen", c.listen), ("--https", c.https)] {
                guard let address, !SocketAddress.isLoopback(address.host) else { continue }
                throw ConfigurationError("--dev serves demo routes that trust every caller, so it listens on loopback only; "
                    + "\(flag) is \(address). Use 127.0.0.1 or ::1, or run without --dev behind your own app server")
            }
        }
        return c
    }
}

public struct ConfigurationError: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}

import Media

extension ServerConfiguration {
    /// The media plane's settings: one worker per loop thread (at most 8), bound where HTTP listens (see
    /// `mediaBindHost`).
    public var mediaConfiguration: MediaConfiguration {
        var media = MediaConfiguration()
        media.port = mediaPort
        media.announcedAddress = mediaAnnounce
        media.bindHost = Self.mediaBindHost(listen: listen.host, announce: mediaAnnounce)
        media.workers = max(1, min(threads, 8))
        media.threadNice = mediaNice
        if development { media.applyTestEnvironment(ProcessInfo.processInfo.environment) }
        return media
    }

    /// Where the media sockets bind: where HTTP listens; on a wildcard, the announced address when it is one of this
    /// machine's own (a socket binds to it), so that answers leave from the address clients — and a TURN server
    /// relaying for them, whose permission names it — sent to (a socket bound to every address answers from the one
    /// the kernel's route picks); else the wildcard (an announced address beyond a NAT or a container's port mapping).
    static func mediaBindHost(listen: String, announce: String?) -> String {
        guard listen == "0.0.0.0" || listen == "::" else { return listen }
        guard let announce, !announce.isEmpty, (try? UDPSocket(host: announce, port: 0)) != nil else { return listen }
        return announce
    }
}
