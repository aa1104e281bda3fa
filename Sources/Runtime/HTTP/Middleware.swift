import Foundation
import Synchronization
import Wire

/// Gives every request an id (the caller's `X-Request-Id` if sane) and echoes it.
public struct RequestIDMiddleware: HTTPMiddleware {
    private final class Counter: Sendable { let value = Atomic<UInt64>(0) }
    private let counter = Counter()
    private let prefix: String

    public init() { prefix = String(UInt32.random(in: 0...UInt32.max), radix: 16) }

    public func handle(_ request: HTTPRequest, next: HTTPHandler) async throws -> HTTPResponse {
        var request = request
        if let given = request.headers["x-request-id"], given.count <= 128, given.allSatisfy({ $0.isASCII && !$0.isWhitespace }) {
            request.id = given
        } else {
            request.id = "\(prefix)-\(counter.value.wrappingAdd(1, ordering: .relaxed).newValue)"
        }
        var response = try await next(request)
        response.headers["X-Request-Id"] = request.id
        return response
    }
}

/// Records request counts and latency by route, and logs each request at debug level
/// (warnings for 5xx).
public struct AccessLogMiddleware: HTTPMiddleware {
    let logger = Logger(label: "http")
    let metrics: Metrics

    public init(metrics: Metrics = .shared) { self.metrics = metrics }

    public func handle(_ request: HTTPRequest, next: HTTPHandler) async throws -> HTTPResponse {
        let start = Instant.now()
        let response = try await next(request)
        let seconds = Double(Instant.now().nanoseconds - start.nanoseconds) / 1e9
        let route = request.route.isEmpty ? "(unrouted)" : request.route
        metrics.recordRequest(method: request.method.rawValue, route: route, status: response.status, seconds: seconds)
        let level: Logger.Level = response.status >= 500 ? .warning : .debug
        if logger.isEnabled(level) {
            logger.log(level, "request", ["method": request.method.rawValue, "path": request.path, "status": response.status,
                                          "ms": String(format: "%.2f", seconds * 1000), "id": request.id])
        }
        return response
    }
}

/// Answers CORS preflights and adds CORS headers, so browser apps on other origins can call the API.
public struct CORSMiddleware: HTTPMiddleware {
    public var allowedOrigins: Set<String>?  // nil: any origin

    public init(allowedOrigins: Set<String>? = nil) { self.allowedOrigins = allowedOrigins }

    public func handle(_ request: HTTPRequest, next: HTTPHandler) async throws -> HTTPResponse {
        guard let origin = request.headers["origin"], allowedOrigins?.contains(origin) ?? true else {
            return try await next(request)
        }
        if request.method == .OPTIONS, request.headers["access-control-request-method"] != nil {
            var r = HTTPResponse(status: 204)
            r.headers["Access-Control-Allow-Origin"] = origin
            r.headers["Access-Control-Allow-Methods"] = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"
            r.headers["Access-Control-Allow-Headers"] = request.headers["access-control-request-headers"] ?? "authorization, content-type"
            r.headers["Access-Control-Max-Age"] = "600"
            r.headers["Vary"] = "Origin"
            return r
        }
        var r = try await next(request)
        r.headers["Access-Control-Allow-Origin"] = origin
        r.headers["Access-Control-Expose-Headers"] = "X-Request-Id"
        r.headers["Vary"] = "Origin"
        return r
    }
}
