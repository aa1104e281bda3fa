import Runtime

/// Domain failures; each maps to an HTTP status in the one JSON error shape.
public enum PlatformError: Error, HTTPErrorConvertible, Sendable {
    case notFound(String)
    case conflict(String)
    case invalid(String)
    case forbidden(String)
    /// A join into a conversation that already holds its capacity of joined members.
    case full(capacity: Int)

    public var status: Int {
        switch self {
        case .notFound: 404
        case .conflict: 409
        case .invalid: 400
        case .forbidden: 403
        case .full: 409
        }
    }
    public var title: String {
        switch self {
        case .notFound: "Not Found"
        case .conflict: "Conflict"
        case .invalid: "Bad Request"
        case .forbidden: "Forbidden"
        case .full: "Conflict"
        }
    }
    public var detail: String {
        switch self {
        case .notFound(let what): "The \(what) does not exist."
        case .conflict(let d), .invalid(let d), .forbidden(let d): d
        case .full(let capacity): "This room is full: it holds at most \(capacity) members."
        }
    }
    public var code: String {
        switch self {
        case .notFound: "not-found"
        case .conflict: "conflict"
        case .invalid: "validation-failed"
        case .forbidden: "forbidden"
        case .full: "room-full"
        }
    }
}

import Store

/// A unique-constraint failure becomes `conflict`; anything else is passed on.
func uniqueViolation(_ error: any Error, as conflict: PlatformError) -> any Error {
    if let e = error as? StoreError, e.isUniqueViolation { return conflict }
    return error
}

extension MemberStateError: HTTPErrorConvertible {
    public var status: Int { 400 }
    public var title: String { "Bad Request" }
    public var code: String { "invalid-member-state" }
}
