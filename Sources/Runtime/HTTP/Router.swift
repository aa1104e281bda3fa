import Wire

/// Handles one request.
public typealias HTTPHandler = @Sendable (HTTPRequest) async throws -> HTTPResponse

/// Wraps handlers: request id, logging, metrics, CORS, authentication.
public protocol HTTPMiddleware: Sendable {
    func handle(_ request: HTTPRequest, next: HTTPHandler) async throws -> HTTPResponse
}

/// Routes by method and path pattern: `/v1/users/:id`, `/static/*` (rest of the path as `*`).
public struct Router: Sendable {
    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
        case rest
    }

    struct Route: Sendable {
        var method: HTTPMethod
        var pattern: String
        var segments: [Segment]
        var bodyLimit: Int?
        var handler: HTTPHandler
    }

    public enum Match: Sendable {
        case found(handler: HTTPHandler, parameters: [String: String], pattern: String, bodyLimit: Int?)
        case methodNotAllowed(allowed: [String])
        case notFound
    }

    private var routes: [Route] = []
    /// Literal paths of the routes that run on the loop, per method: answered without a route match.
    private var loopPaths: [HTTPMethod: Set<String>] = [:]

    public init() {}

    /// Whether the route for this request runs on the connection's loop (see `add`). Only literal routes
    /// opt in, so this is one set lookup on the request path.
    public func runsOnLoop(method: HTTPMethod, path: String) -> Bool {
        loopPaths[method]?.contains(path) ?? false
    }

    /// Adds a route. Handlers run on the global executor, off the event loops, because most of them reach the
    /// store; `onLoop` runs one on the connection's loop instead (no thread hop), for handlers that do no I/O
    /// and never block.
    public mutating func add(_ method: HTTPMethod, _ pattern: String, bodyLimit: Int? = nil, onLoop: Bool = false,
                             _ handler: @escaping HTTPHandler) {
        let segments: [Segment] = Self.split(pattern).map { part in
            if part == "*" { return .rest }
            if part.hasPrefix(":") { return .parameter(String(part.dropFirst())) }
            return .literal(String(part))
        }
        precondition(!onLoop || segments.allSatisfy { if case .literal = $0 { true } else { false } },
                     "only literal routes run on the loop")
        routes.append(Route(method: method, pattern: pattern, segments: segments, bodyLimit: bodyLimit, handler: handler))
        if onLoop {
            let path = "/" + segments.map { if case .literal(let l) = $0 { l } else { "" } }.joined(separator: "/")
            loopPaths[method, default: []].insert(path)
            if method == .GET { loopPaths[.HEAD, default: []].insert(path) }
        }
    }

    public mutating func get(_ p: String, onLoop: Bool = false, _ h: @escaping HTTPHandler) { add(.GET, p, onLoop: onLoop, h) }
    public mutating func post(_ p: String, bodyLimit: Int? = nil, _ h: @escaping HTTPHandler) { add(.POST, p, bodyLimit: bodyLimit, h) }
    public mutating func put(_ p: String, bodyLimit: Int? = nil, _ h: @escaping HTTPHandler) { add(.PUT, p, bodyLimit: bodyLimit, h) }
    public mutating func patch(_ p: String, _ h: @escaping HTTPHandler) { add(.PATCH, p, h) }
    public mutating func delete(_ p: String, _ h: @escaping HTTPHandler) { add(.DELETE, p, h) }

    /// Finds the route; HEAD falls back to GET; a path that exists under other methods is a 405 (a path that
    /// only a wildcard route of another method covers is a 404).
    public func match(method: HTTPMethod, path: String) -> Match {
        let parts = Self.split(path)
        var allowed: [String] = []
        var fallback: Match?
        for route in routes {
            guard let params = Self.bind(route.segments, parts) else { continue }
            if route.method == method {
                return .found(handler: route.handler, parameters: params, pattern: route.pattern, bodyLimit: route.bodyLimit)
            }
            if method == .HEAD && route.method == .GET && fallback == nil {
                fallback = .found(handler: route.handler, parameters: params, pattern: route.pattern, bodyLimit: route.bodyLimit)
            }
            // A wildcard route (static files) does not show that this path exists under another method.
            if route.segments.last != .rest, !allowed.contains(route.method.rawValue) { allowed.append(route.method.rawValue) }
        }
        if let fallback { return fallback }
        if allowed.isEmpty { return .notFound }
        if allowed.contains("GET") && !allowed.contains("HEAD") { allowed.append("HEAD") }
        return .methodNotAllowed(allowed: allowed)
    }

    private static func split(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }

    private static func bind(_ segments: [Segment], _ parts: [Substring]) -> [String: String]? {
        var params: [String: String] = [:]
        var i = 0
        for segment in segments {
            switch segment {
            case .rest:
                params["*"] = parts[min(i, parts.count)...].joined(separator: "/")
                return params
            case .literal(let l):
                guard i < parts.count, parts[i] == l else { return nil }
            case .parameter(let name):
                guard i < parts.count else { return nil }
                params[name] = parts[i].removingPercentEncoding ?? String(parts[i])
            }
            i += 1
        }
        return i == parts.count ? params : nil
    }
}

/// What the HTTP server calls: answers the body limit for a head and where its handler runs, then produces
/// the response.
public protocol HTTPResponder: Sendable {
    func bodyLimit(for head: HTTPRequestHead) -> Int?
    /// Whether the handler may run on the connection's event loop (it does no I/O and never blocks).
    func runsOnEventLoop(_ head: HTTPRequestHead) -> Bool
    func respond(to request: HTTPRequest) async -> HTTPResponse
}

extension HTTPResponder {
    public func runsOnEventLoop(_ head: HTTPRequestHead) -> Bool { false }
}

/// A router plus middleware: the responder the server runs.
public struct HTTPApplication: HTTPResponder {
    public var router: Router
    public var middleware: [any HTTPMiddleware]
    /// The body limit of routes that do not set their own, and of requests no route takes: what an API
    /// body needs, so a large body cannot cost parsing time on a route that would never use it.
    public var defaultBodyLimit = 64 * 1024

    public init(router: Router, middleware: [any HTTPMiddleware] = []) {
        self.router = router
        self.middleware = middleware
    }

    public func bodyLimit(for head: HTTPRequestHead) -> Int? {
        if case .found(_, _, _, let limit?) = router.match(method: head.method, path: head.path) { return limit }
        return defaultBodyLimit
    }

    public func runsOnEventLoop(_ head: HTTPRequestHead) -> Bool {
        router.runsOnLoop(method: head.method, path: head.path)
    }

    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        var request = request
        let final: HTTPHandler
        switch router.match(method: request.method, path: request.path) {
        case .found(let handler, let parameters, let pattern, _):
            request.parameters = parameters
            request.route = pattern
            final = handler
        case .methodNotAllowed(let allowed):
            request.route = "(405)"
            final = { request in
                if request.method == .OPTIONS { return HTTPResponse(status: 204, headers: ["Allow": allowed.joined(separator: ", ")]) }
                throw APIError.methodNotAllowed(allowed)
            }
        case .notFound:
            request.route = "(404)"
            final = { request in throw APIError.notFound("No route for \(request.method) \(request.path).") }
        }
        var chain: HTTPHandler = { req in
            do { return try await final(req) } catch { return HTTPResponse.error(error, requestID: req.id) }
        }
        for m in middleware.reversed() {
            let next = chain
            chain = { req in
                do { return try await m.handle(req, next: next) } catch { return HTTPResponse.error(error, requestID: req.id) }
            }
        }
        return (try? await chain(request)) ?? HTTPResponse.error(APIError.internalError())
    }
}
