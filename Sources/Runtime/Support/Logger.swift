import Foundation
import Synchronization

/// Structured logs as logfmt or JSON lines, one line per event, written to stderr.
public struct Logger: Sendable {
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case debug, info, warning, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        public var name: String { ["debug", "info", "warn", "error"][rawValue] }
        public init?(name: String) {
            switch name.lowercased() {
            case "debug": self = .debug
            case "info": self = .info
            case "warn", "warning": self = .warning
            case "error": self = .error
            default: return nil
            }
        }
    }
    public enum Format: String, Sendable { case logfmt, json }

    public struct Configuration: Sendable {
        public var level: Level = .info
        public var format: Format = .logfmt
        public init(level: Level = .info, format: Format = .logfmt) { self.level = level; self.format = format }
    }

    static let shared = Mutex(Configuration())

    public let label: String
    public init(label: String) { self.label = label }

    public static func configure(_ c: Configuration) { shared.withLock { $0 = c } }

    /// True when a message at `level` would be written; check it before building costly fields.
    public func isEnabled(_ level: Level) -> Bool { level >= Self.shared.withLock { $0.level } }

    public func debug(_ msg: @autoclosure () -> String, _ fields: KeyValuePairs<String, Any> = [:]) { log(.debug, msg(), fields) }
    public func info(_ msg: @autoclosure () -> String, _ fields: KeyValuePairs<String, Any> = [:]) { log(.info, msg(), fields) }
    public func warning(_ msg: @autoclosure () -> String, _ fields: KeyValuePairs<String, Any> = [:]) { log(.warning, msg(), fields) }
    public func error(_ msg: @autoclosure () -> String, _ fields: KeyValuePairs<String, Any> = [:]) { log(.error, msg(), fields) }

    public func log(_ level: Level, _ msg: @autoclosure () -> String, _ fields: KeyValuePairs<String, Any> = [:]) {
        let config = Self.shared.withLock { $0 }
        guard level >= config.level else { return }
        let ts = ISO8601DateFormatter.string(from: Date(), timeZone: .gmt, formatOptions: [.withInternetDateTime, .withFractionalSeconds])
        var line: String
        switch config.format {
        case .json:
            var obj: [String: Any] = ["ts": ts, "level": level.name, "logger": label, "msg": msg()]
            for (k, v) in fields { obj[k] = (v as? String) ?? (v as? Int).map { $0 as Any } ?? (v as? Double).map { $0 as Any } ?? "\(v)" }
            let data = (try? JSONSerialization.data(withJSONObject: obj, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
            line = String(decoding: data, as: UTF8.self)
        case .logfmt:
            line = "ts=\(ts) level=\(level.name) logger=\(label) msg=\(Self.quote(msg()))"
            for (k, v) in fields { line += " \(k)=\(Self.quote("\(v)"))" }
        }
        line += "\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    static func quote(_ s: String) -> String {
        if !s.isEmpty && !s.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) { return s }
        return "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n") + "\""
    }
}
