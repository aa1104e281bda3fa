/// A JWT `acl` claim: `{"paths": {"/*/users/**": {...}, ...}}` (RFC-less, as the client SDKs send it).
///
/// In a path pattern `*` matches one segment and `**` any number of segments (including none).
/// Matching runs as a set of pattern positions advanced one path segment at a time, so its cost is
/// (path segments × pattern segments) whatever the pattern: a backtracking matcher is exponential in
/// the number of `**` (60 of them cost seconds per request), and any tenant can sign such a token.
public struct ACL: Sendable, Equatable {
    /// What a token's ACL may hold; larger ones are refused when the token is authenticated.
    public enum Limits {
        public static let paths = 64
        public static let segmentsPerPath = 32
        public static let bytesPerPath = 512
    }

    public var patterns: [[Substring]]
    public let source: [String]

    public init(paths: [String]) {
        source = paths
        patterns = paths.map { $0.split(separator: "/", omittingEmptySubsequences: true) }
    }

    /// Why this ACL is over `Limits`, or nil when it is within them.
    public var limitViolation: String? {
        if source.count > Limits.paths { return "the token's ACL has more than \(Limits.paths) paths" }
        for (path, segments) in zip(source, patterns) {
            if path.utf8.count > Limits.bytesPerPath { return "an ACL path is longer than \(Limits.bytesPerPath) bytes" }
            if segments.count > Limits.segmentsPerPath { return "an ACL path has more than \(Limits.segmentsPerPath) segments" }
        }
        return nil
    }

    /// The standard client path set the client SDKs are issued.
    public static let clientPaths = ["/*/users/**", "/*/conversations/**", "/*/sessions/**", "/*/devices/**", "/*/image/**",
                                     "/*/media/**", "/*/applications/**", "/*/push/**", "/*/knocking/**", "/*/legs/**", "/*/rtc/**"]

    public func allows(path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        return patterns.contains { Self.match($0, parts) }
    }

    /// Whether `pattern` matches all of `path`. `live[i]` says the first `i` pattern segments can have
    /// matched the path read so far; a `**` keeps its position live across any segment.
    static func match(_ pattern: [Substring], _ path: [Substring]) -> Bool {
        var live = [Bool](repeating: false, count: pattern.count + 1)
        var next = live
        live[0] = true
        closeOverDoubleStars(&live, pattern)
        for seg in path {
            for i in next.indices { next[i] = false }
            var any = false
            for i in 0..<pattern.count where live[i] {
                let head = pattern[i]
                if head == "**" {
                    next[i] = true
                    any = true
                } else if head == "*" || head == seg {
                    next[i + 1] = true
                    any = true
                }
            }
            if !any { return false }
            swap(&live, &next)
            closeOverDoubleStars(&live, pattern)
        }
        return live[pattern.count]
    }

    /// A `**` also matches no segment: a live position before it makes the one after it live too.
    private static func closeOverDoubleStars(_ live: inout [Bool], _ pattern: [Substring]) {
        for i in 0..<pattern.count where live[i] && pattern[i] == "**" { live[i + 1] = true }
    }
}
