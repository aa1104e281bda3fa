// swift-tools-version:6.0
import PackageDescription

// Test code compiles unoptimized, even in `make test`'s release build: the modules it drives are optimized, and
// this cuts the test targets' share of that build by a third (88 s against 133 s on 2 cores) for a Swift test run that
// takes about as long.
let testSettings: [SwiftSetting] = [.unsafeFlags(["-Onone"])]

let package = Package(
    name: "Switchboard",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "switchboard", targets: ["switchboard"]),
        .executable(name: "switchboard-dropin", targets: ["switchboard-dropin"]),
        .executable(name: "switchboard-voice", targets: ["switchboard-voice"]),
        .executable(name: "switchboard-video", targets: ["switchboard-video"]),
        .library(name: "SwitchboardClient", targets: ["SwitchboardClient"]),
    ],
    dependencies: [],
    targets: [
        // C libraries from Debian packages.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CGcrypt", pkgConfig: "libgcrypt", providers: [.apt(["libgcrypt20-dev"])]),
        .systemLibrary(name: "CSRTP", pkgConfig: "libsrtp2", providers: [.apt(["libsrtp2-dev"])]),
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(name: "CSpeexDSP", pkgConfig: "speexdsp", providers: [.apt(["libspeexdsp-dev"])]),
        .systemLibrary(name: "CEspeak", pkgConfig: "espeak-ng", providers: [.apt(["libespeak-ng-dev"])]),
        .systemLibrary(name: "CPocketSphinx", pkgConfig: "pocketsphinx", providers: [.apt(["libpocketsphinx-dev", "pocketsphinx-en-us"])]),
        .systemLibrary(name: "CMpg123", pkgConfig: "libmpg123", providers: [.apt(["libmpg123-dev"])]),
        .systemLibrary(name: "CLame", providers: [.apt(["libmp3lame-dev"])]),
        .systemLibrary(name: "COpusFile", pkgConfig: "opusfile", providers: [.apt(["libopusfile-dev"])]),
        .systemLibrary(name: "COpusEnc", pkgConfig: "libopusenc", providers: [.apt(["libopusenc-dev"])]),
        .systemLibrary(name: "CVPX", pkgConfig: "vpx", providers: [.apt(["libvpx-dev"])]),
        .systemLibrary(name: "CAV", pkgConfig: "libavformat", providers: [.apt(["libavcodec-dev", "libavformat-dev", "libavutil-dev"])]),
        // Macros and GNU-only calls Swift cannot import directly.
        .target(name: "CShims", dependencies: ["COpenSSL", "CGcrypt"]),

        // Pure parsers and serializers: no I/O, no clocks.
        .target(name: "Wire"),
        // Hashes, HMAC, JWT, RSA/EC keys, DTLS engine, SRTP keys and profiles.
        .target(name: "Crypto", dependencies: ["Wire", "CShims", "COpenSSL"]),
        // The in-place SRTP/SRTCP transform: the SFU's transports, the load generator and SIP legs. Each
        // instance is confined to its transport's thread, so it skips the dynamic exclusivity checks as the
        // media plane does (they cost the fan-out ~10 % per packet).
        .target(name: "SRTP", dependencies: ["Crypto", "Wire", "CShims"],
                swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"])]),
        // Audio DSP, sans-I/O: frames, codecs, resampler, jitter buffer, DTMF and tones, mixing arithmetic,
        // text-to-speech and speech recognition (each its own small thread pool), audio file readers and writers.
        // Its classes (codecs, jitter buffers, MixerCore) are confined to the thread that owns them (a media
        // worker) and the Sendable speech service locks, so, like Media, it skips the dynamic exclusivity
        // checks: in a mixed room they were 5 % of the server's CPU at 1,000 listeners
        // (`MixerCore.output(for:)` once per listener per tick).
        .target(name: "Audio", dependencies: ["COpus", "CSpeexDSP", "CEspeak", "CPocketSphinx", "CMpg123", "CLame", "COpusFile", "COpusEnc"],
                swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"])]),
        // Event loops, sockets, timers, TLS, HTTP server/client, WebSocket server/client.
        .target(name: "VideoCodec", dependencies: ["CVPX", "CAV"]),
        .target(name: "Runtime", dependencies: ["Wire", "Crypto", "CShims", "COpenSSL"]),
        // Embedded SQLite store.
        .target(name: "Store", dependencies: ["CSQLite"]),
        // WebRTC media plane.
        // Everything in a media worker is confined to its thread, so the packet path skips the dynamic
        // exclusivity checks (a thread-local access set per class property access).
        .target(name: "Media", dependencies: ["Wire", "Crypto", "SRTP", "Runtime", "CShims", "Audio"],
                swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"])]),
        // The client role of the media stack and the media benchmarks: the load generator behind
        // `switchboard load`, the in-process fan-out benchmark and the UDP send floor. Its peers are
        // confined to their loop threads as workers are, and built the same way.
        .target(name: "MediaLoad", dependencies: ["Media", "Wire", "Crypto", "SRTP", "Runtime", "CShims", "Audio"],
                swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"])]),
        // SIP telephony edge: transactions, dialogs, digest auth, plain-RTP SDP (sans-I/O), and the
        // UDP/TCP transport and user-agent shell on the event loops.
        .target(name: "Telephony", dependencies: ["Wire", "Crypto", "SRTP", "Runtime", "CShims", "Audio"]),
        // Domain: accounts, applications, users, conversations, webhooks.
        .target(name: "Platform", dependencies: ["Wire", "Crypto", "Runtime", "Store"]),
        // Live state and orchestration: rooms, video sessions, calls, over Media and Platform.
        .target(name: "Live", dependencies: ["Platform", "Media", "Runtime", "Crypto", "Wire", "Audio"]),
        // REST routes, realtime gateway, web assets: translation only.
        .target(name: "API", dependencies: ["Live", "Platform", "Runtime", "Crypto", "Wire", "Store", "Media", "Telephony", "Audio", "VideoCodec"]),
        // The Swift client SDK: sessions, conversations, headless media, video, view models.
        .target(name: "SwitchboardClient", dependencies: ["Audio", "MediaLoad", "Media", "Runtime", "Crypto", "SRTP", "Wire", "CShims"]),
        .executableTarget(name: "switchboard", dependencies: ["API", "Platform", "Runtime", "Crypto", "Store", "Media", "MediaLoad", "Wire", "Audio", "CShims",
                                                              "SwitchboardClient"]),
        // Audio benchmarks (scripts/bench-audio).
        .executableTarget(name: "audio-bench", dependencies: ["Audio"], path: "Benchmarks/audio-bench"),
        .executableTarget(name: "ncco-bench", dependencies: ["Live", "Wire"], path: "Benchmarks/ncco-bench"),
        // The reference app servers: outside clients of the REST API, as an app server of the hosted APIs is.
        .target(name: "AppServerSupport", dependencies: ["Runtime", "Crypto", "Wire"], path: "Examples/Support"),
        .executableTarget(name: "switchboard-dropin", dependencies: ["AppServerSupport", "Runtime", "Store", "Wire"], path: "Examples/dropin"),
        .executableTarget(name: "switchboard-voice", dependencies: ["AppServerSupport", "Runtime", "Wire"], path: "Examples/voice"),
        .executableTarget(name: "switchboard-video", dependencies: ["AppServerSupport", "Runtime", "Wire"], path: "Examples/video"),

        .testTarget(name: "WireTests", dependencies: ["Wire"], resources: [], swiftSettings: testSettings),
        // libsrtp as the reference the SRTP implementation is checked against; tests only.
        .target(name: "SRTPReference", dependencies: ["Crypto", "CSRTP"], path: "Tests/Support/SRTPReference"),
        .testTarget(name: "AudioTests", dependencies: ["Audio"], swiftSettings: testSettings),
        .testTarget(name: "VideoCodecTests", dependencies: ["VideoCodec", "CVPX", "CAV"], swiftSettings: testSettings),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto", "SRTP", "Wire", "SRTPReference"], swiftSettings: testSettings),
        .testTarget(name: "RuntimeTests", dependencies: ["Runtime", "Wire", "Crypto"], swiftSettings: testSettings),
        .testTarget(name: "StoreTests", dependencies: ["Store"], swiftSettings: testSettings),
        .testTarget(name: "MediaTests", dependencies: ["Media", "MediaLoad", "Wire", "Crypto", "SRTP", "Runtime", "SRTPReference", "Audio"], swiftSettings: testSettings),
        .testTarget(name: "PlatformTests", dependencies: ["Platform", "Store", "Wire"], swiftSettings: testSettings),
        .testTarget(name: "LiveTests", dependencies: ["Live", "Media", "MediaLoad", "Platform", "Runtime", "Crypto", "Wire"], swiftSettings: testSettings),
        .testTarget(name: "TelephonyTests", dependencies: ["Telephony", "Wire", "Crypto", "Runtime", "Audio", "SRTPReference"], swiftSettings: testSettings),
        .testTarget(name: "SwitchboardClientTests", dependencies: ["SwitchboardClient", "Audio", "API", "Platform", "Runtime", "Crypto", "Wire"], swiftSettings: testSettings),
        .testTarget(name: "APITests", dependencies: ["API", "Live", "MediaLoad", "Platform", "Runtime", "Crypto", "Store", "Telephony"], swiftSettings: testSettings),
    ]
)
