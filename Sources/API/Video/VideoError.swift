import Runtime

/// Errors of the video session protocol; `code` is what clients switch on.
struct VideoError: HTTPErrorConvertible, Sendable {
    var code: String
    var detail: String
    var status: Int { code == "sessionNotFound" || code == "notFound" ? 404 : 403 }
    var title: String { code }

    static let notConnected = VideoError(code: "notConnected", detail: "Send video:connect first.")
}
