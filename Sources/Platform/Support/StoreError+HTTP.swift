import Runtime
import Store

/// How store failures reach HTTP. A full or failing data volume is an operating condition the client
/// should see as such (its write was not saved, retry later), not an anonymous 500; anything else stays
/// a 500 whose detail reveals nothing of the database.
extension StoreError: HTTPErrorConvertible {
    /// SQLite primary result codes (https://sqlite.org/rescode.html).
    private static let ioError: Int32 = 10, full: Int32 = 13

    public var status: Int {
        switch self {
        case .sqlite(let code, _) where code & 0xFF == Self.full: 507
        case .sqlite(let code, _) where code & 0xFF == Self.ioError: 503
        case .busy: 503
        default: 500
        }
    }

    public var title: String {
        switch status {
        case 507: "Insufficient Storage"
        case 503: "Service Unavailable"
        default: "Internal Server Error"
        }
    }

    public var code: String {
        switch self {
        case .sqlite(let code, _) where code & 0xFF == Self.full: "storage-full"
        case .sqlite(let code, _) where code & 0xFF == Self.ioError: "storage-unavailable"
        case .busy: "storage-busy"
        default: "internal-error"
        }
    }

    public var detail: String {
        switch code {
        case "storage-full": "The server's data volume is full; this write was not saved. Retry once space is freed."
        case "storage-unavailable": "The server could not write to its data volume; this write was not saved."
        case "storage-busy": "The store was busy; this write was not saved. Retry shortly."
        default: "The server failed to handle the request."
        }
    }
}
