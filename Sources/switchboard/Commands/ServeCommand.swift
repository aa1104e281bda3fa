import API
import CShims
import Dispatch
import Foundation
import Glibc
import Runtime

struct ServeCommand {
    static let command = Command(name: "serve", summary: "run the server", usage: usage) { args in
        try await run(args)
    }

    static var usage: String {
        var s = "Usage: switchboard serve [options]\n\nEach option is also an environment variable and a key of the JSON file given by --config.\n\n"
        let rows = [("--config FILE", "JSON config file (SWITCHBOARD_CONFIG)")]
            + ServerConfiguration.settings.map { setting in
                let option = ServerConfiguration.booleanFlags.contains(setting.flag) ? setting.flag : "\(setting.flag) VALUE"
                return (option, "\(setting.help) (\(setting.env))")
            }
        // The widest option sets the column, so no option runs into its help.
        let width = rows.map(\.0.count).max()! + 4
        for (option, help) in rows {
            s += "  " + option.padding(toLength: width, withPad: " ", startingAt: 0) + help + "\n"
        }
        return s
    }

    static func run(_ argv: [String]) async throws -> Int32 {
        let args = try Arguments(argv, booleanFlags: ServerConfiguration.booleanFlags)
        try args.check(known: Set(ServerConfiguration.settings.map(\.flag) + ["--config"]))
        var flags = args.options
        for flag in args.booleans where ServerConfiguration.booleanFlags.contains(flag) { flags[flag] = "true" }
        let config = try ServerConfiguration.resolve(flags: flags, environment: ProcessInfo.processInfo.environment)
        Logger.configure(.init(level: config.logLevel, format: config.logFormat))
        let logger = Logger(label: "serve")
        // Before anything opens a descriptor or sizes its limits from the descriptor budget.
        let descriptors = DescriptorLimit.raiseToHard()
        let server = try SwitchboardServer(configuration: config)
        let priorities = await server.media.threadPriorities()
        if let refused = priorities.first(where: { !$0.granted }), let requested = refused.requested {
            logger.warning("media workers keep the process's priority", ["requested_nice": "\(requested)", "nice": "\(refused.nice)",
                                                                        "reason": refused.refusal ?? ""])
        } else if let first = priorities.first {
            logger.info("media workers", ["count": "\(priorities.count)", "nice": "\(first.nice)"])
        }
        // SIP binds first: once HTTP answers, the whole server is up (or the process has said why not).
        let sipAddress = try await server.startSIP()
        let (httpAddress, httpsAddress) = try server.start()
        logger.info("descriptor limit", ["soft": "\(descriptors.soft)", "hard": "\(descriptors.hard)",
                                         "max_connections": "\(server.connectionLimit)",
                                         "max_connections_per_address": "\(config.maxConnectionsPerAddress)"])
        if config.maxConnections > server.connectionLimit {
            logger.warning("--max-connections is above what the descriptor limit allows; raise the hard limit (ulimit -Hn) to serve more",
                           ["requested": "\(config.maxConnections)", "used": "\(server.connectionLimit)"])
        }
        var lines = ["Switchboard \(SwitchboardServer.version) serving", "  http:  http://\(httpAddress)/"]
        if let httpsAddress { lines.append("  https: https://\(httpsAddress)/") }
        if let sipAddress {
            let tls = server.sipTLSAddress.map { ", tls \($0)" } ?? ""
            lines.append("  sip:   udp+tcp \(sipAddress)\(tls) (rtp \(config.rtpPorts.lowerBound)-\(config.rtpPorts.upperBound))")
        }
        if let ca = server.developmentCAFile { lines.append("  development CA: \(ca)") }
        lines.append("  data:  \(config.dataDirectory)")
        if config.development {
            lines.append("  DEVELOPMENT MODE (--dev): demo app servers at /rooms/api and /video/api and the /test/media routes are on;")
            lines.append("  they trust every caller, so the server listens on loopback only. Run without --dev in production.")
        }
        let (account, created) = server.account
        if created {
            lines.append("Created account \(account.apiKey) with secret \(account.apiSecret) (saved in \(server.core.accounts.accountFile); shown only now)")
        } else {
            lines.append("  account: \(account.apiKey) (credentials in \(server.core.accounts.accountFile))")
        }
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        logger.info("listening", ["http": "\(httpAddress)", "https": httpsAddress.map { "\($0)" } ?? "off"])

        await waitForTerminationSignal()
        logger.info("shutting down")
        await server.shutdown()
        logger.info("stopped")
        return 0
    }

    /// Suspends until SIGINT or SIGTERM. The handler only writes to an eventfd that one thread blocks
    /// on, so a running server is not woken to look for a signal.
    static func waitForTerminationSignal() async {
        let fd = sb_termination_eventfd()
        guard fd >= 0 else {
            // No eventfd or handler: the default action (the process ends at once) is all that is left.
            while true { try? await Task.sleep(for: .seconds(3600)) }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                var count: UInt64 = 0
                while read(fd, &count, MemoryLayout<UInt64>.size) < 0 && errno == EINTR {}
                continuation.resume()
            }
        }
    }
}
