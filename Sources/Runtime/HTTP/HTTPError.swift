import Foundation

/// An error that reaches HTTP: it carries a status and renders the one JSON error shape
/// `{"type", "title", "detail"}` (plus `code` and `instance` when known).
public protocol HTTPErrorConvertible: Error {
    var status: Int { get }
    var title: String { get }
    var detail: String { get }
    /// A short machine-readable code, e.g. `not-found`; becomes the fragment of `type`.
    var code: String { get }
    /// Extra response headers (`Allow`, `WWW-Authenticate`, …).
    var headers: [(String, String)] { get }
}

extension HTTPErrorConvertible {
    public var headers: [(String, String)] { [] }
}

/// The general-purpose API error.
public struct APIError: HTTPErrorConvertible, Sendable, CustomStringConvertible {
    public var status: Int
    public var title: String
    public var detail: String
    public var code: String
    public var headers: [(String, String)]

    public init(status: Int, code: String, title: String, detail: String, headers: [(String, String)] = []) {
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.headers = headers
    }

    public var description: String { "\(status) \(code): \(detail)" }

    public static func badRequest(_ detail: String, code: String = "bad-request") -> APIError {
        APIError(status: 400, code: code, title: "Bad Request", detail: detail)
    }
    public static func notFound(_ detail: String = "The requested resource does not exist.", code: String = "not-found") -> APIError {
        APIError(status: 404, code: code, title: "Not Found", detail: detail)
    }
    public static func conflict(_ detail: String, code: String = "conflict") -> APIError {
        APIError(status: 409, code: code, title: "Conflict", detail: detail)
    }
    public static func unauthorized(_ detail: String = "Missing or invalid credentials.", challenge: String = "Bearer") -> APIError {
        APIError(status: 401, code: "unauthorized", title: "Unauthorized", detail: detail,
                 headers: [("WWW-Authenticate", challenge)])
    }
    public static func forbidden(_ detail: String = "These credentials do not allow this request.") -> APIError {
        APIError(status: 403, code: "forbidden", title: "Forbidden", detail: detail)
    }
    public static func methodNotAllowed(_ allowed: [String]) -> APIError {
        APIError(status: 405, code: "method-not-allowed", title: "Method Not Allowed",
                 detail: "Allowed methods: \(allowed.joined(separator: ", ")).", headers: [("Allow", allowed.joined(separator: ", "))])
    }
    public static func unprocessable(_ detail: String, code: String = "validation-failed") -> APIError {
        APIError(status: 422, code: code, title: "Unprocessable Entity", detail: detail)
    }
    public static func internalError(_ detail: String = "The server failed to handle the request.") -> APIError {
        APIError(status: 500, code: "internal-error", title: "Internal Server Error", detail: detail)
    }
    public static func unavailable(_ detail: String) -> APIError {
        APIError(status: 503, code: "unavailable", title: "Service Unavailable", detail: detail)
    }
}

private let unhandledErrors = Logger(label: "http")

extension HTTPResponse {
    /// Renders any error in the JSON error shape; unknown errors become a 500 without internals, and
    /// the operator's log gets what actually failed (with the request id the client was given).
    public static func error(_ error: any Error, requestID: String? = nil) -> HTTPResponse {
        let e: HTTPErrorConvertible
        if let known = error as? HTTPErrorConvertible {
            e = known
            // A typed 5xx (a full disk, a failing store) still tells the operator what failed.
            if known.status >= 500 {
                unhandledErrors.error("server error", ["request_id": requestID ?? "-", "status": known.status,
                                                       "error": String(describing: error)])
            }
        } else {
            unhandledErrors.error("unhandled error", ["request_id": requestID ?? "-", "error": String(describing: error)])
            e = APIError.internalError()
        }
        var body: [String: String] = [
            "type": "urn:switchboard:error:\(e.code)",
            "title": e.title,
            "detail": e.detail,
            "code": e.code,
        ]
        if let requestID { body["instance"] = requestID }
        let data = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        var r = HTTPResponse(status: e.status, body: [UInt8](data))
        r.headers["Content-Type"] = "application/json"
        for (k, v) in e.headers { r.headers.add(name: k, value: v) }
        return r
    }
}
