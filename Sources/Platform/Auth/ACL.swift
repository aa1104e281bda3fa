/// A JWT `acl` claim: `{"paths": {"/*/users/**": {...}, ...}}` (RFC-less, as the client SDKs send it).
///
/// In a path pattern `*` matches one segment and `**` any number of segments (including none).
public struct ACL: Sendable, Equatable {
    public var patterns: [[Substring]]
    public let source: [String]

    public init(paths: [String]) {
        source = paths
        patterns = paths.map { $0.split(separator: "/", omittingEmptySubsequences: true) }
    }

    /// The standard client path set the client SDKs are issued.
    public static let clientPaths = ["/*/users/**", "/*/conversations/**", "/*/sessions/**", "/*/devices/**", "/*/image/**",
                                     "/*/media/**", "/*/applications/**", "/*/push/**", "/*/knocking/**", "/*/legs/**", "/*/rtc/**"]

    public func allows(path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        return patterns.contains { Self.match($0[...], parts[...]) }
    }

    static func match(_ pattern: ArraySlice<Substring>, _ path: ArraySlice<Substring>) -> Bool {
        guard let head = pattern.first else { return path.isEmpty }
        if head == "**" {
            let rest = pattern.dropFirst()
            if rest.isEmpty { return true }
            var p = path
            while true {
                if match(rest, p) { return true }
                if p.isEmpty { return false }
                p = p.dropFirst()
            }
        }
        guard let seg = path.first else { return false }
        if head == "*" || head == seg { return match(pattern.dropFirst(), path.dropFirst()) }
        return false
    }
}
