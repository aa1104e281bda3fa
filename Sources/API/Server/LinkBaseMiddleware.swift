import Runtime
import Synchronization

/// Sets `HTTPRequest.baseURL` for links in responses: `--public-url` when configured, else the address
/// of the listener the request arrived on (relative links when that is a wildcard such as 0.0.0.0).
/// The `Host` header is never used: echoing it would let a client plant another host in the links.
final class LinkBaseMiddleware: HTTPMiddleware {
    private let publicURL: String?
    private let listeners = Mutex<(http: String, https: String)>(("", ""))

    init(publicURL: String?) { self.publicURL = publicURL }

    /// Records a listener's address once it is bound, before it accepts anything.
    func listening(_ address: SocketAddress, secure: Bool) {
        let base = Self.base(secure ? "https" : "http", address)
        listeners.withLock { if secure { $0.https = base } else { $0.http = base } }
    }

    static func base(_ scheme: String, _ address: SocketAddress) -> String {
        ["0.0.0.0", "::", ""].contains(address.host) ? "" : "\(scheme)://\(address)"
    }

    func handle(_ request: HTTPRequest, next: HTTPHandler) async throws -> HTTPResponse {
        var request = request
        if let publicURL {
            request.baseURL = publicURL
        } else {
            let (http, https) = listeners.withLock { $0 }
            request.baseURL = request.isSecure ? https : http
        }
        return try await next(request)
    }
}
