import Wire
import Crypto
import Foundation
import Runtime

/// Cursor pagination over a monotonically increasing sequence column (`seq`), in either order.
///
/// A cursor is opaque to clients: base64url of `<direction>:<seq>`; `n` pages onward from `seq`, `p` back.
public struct PageRequest: Sendable, Equatable {
    public enum Order: String, Sendable { case asc, desc }
    public var pageSize: Int
    public var order: Order
    /// Position to continue from and which way.
    public var after: (seq: Int64, forward: Bool)?

    public static func == (a: PageRequest, b: PageRequest) -> Bool {
        a.pageSize == b.pageSize && a.order == b.order && a.after?.seq == b.after?.seq && a.after?.forward == b.after?.forward
    }

    /// Reads `page_size` (default 10, max 100), `order` (asc|desc, either case) and `cursor`.
    public static func parse(_ query: [String: String], defaultSize: Int = 10) throws -> PageRequest {
        var size = defaultSize
        if let s = query["page_size"] {
            guard let n = Int(s), n >= 1, n <= 100 else { throw APIError.badRequest("page_size must be between 1 and 100.", code: "invalid-page-size") }
            size = n
        }
        var order = Order.asc
        if let o = query["order"] {
            guard let v = Order(rawValue: o.lowercased()) else { throw APIError.badRequest("order must be asc or desc.", code: "invalid-order") }
            order = v
        }
        var after: (Int64, Bool)?
        if let c = query["cursor"], !c.isEmpty {
            guard let raw = Base64URL.decode(c).map({ String(decoding: $0, as: UTF8.self) }),
                  let colon = raw.firstIndex(of: ":"),
                  let seq = Int64(raw[raw.index(after: colon)...]),
                  ["n", "p"].contains(String(raw[..<colon])) else {
                throw APIError.badRequest("The cursor is not valid.", code: "invalid-cursor")
            }
            after = (seq, raw[..<colon] == "n")
        }
        return PageRequest(pageSize: size, order: order, after: after)
    }

    public init(pageSize: Int = 10, order: Order = .asc, after: (seq: Int64, forward: Bool)? = nil) {
        self.pageSize = pageSize
        self.order = order
        self.after = after
    }

    static func cursor(_ seq: Int64, forward: Bool) -> String { Base64URL.encode("\(forward ? "n" : "p"):\(seq)") }

    /// SQL pieces: a condition on `seq`, its binding, the ORDER BY direction, and whether rows come back reversed.
    var sql: (condition: String, binding: Int64?, orderBy: String, reversed: Bool) {
        let ascending = order == .asc
        guard let after else { return ("1=1", nil, ascending ? "ASC" : "DESC", false) }
        // Walking forward in asc order means seq > x ascending; backward means seq < x descending, then reverse.
        let increasing = after.forward == ascending
        return (increasing ? "seq > ?" : "seq < ?", after.seq, increasing ? "ASC" : "DESC", !after.forward)
    }
}

/// One page of results plus the cursors around it.
public struct Page<Item: Sendable>: Sendable {
    public var items: [Item]
    public var next: String?
    public var prev: String?
    public var pageSize: Int
}

extension Page {
    /// Builds a page from rows fetched with `limit pageSize + 1` (the extra row tells whether more exist).
    static func make(rows: [(seq: Int64, item: Item)], request: PageRequest) -> Page<Item> {
        var rows = rows
        let hasMoreInWalkDirection = rows.count > request.pageSize
        if hasMoreInWalkDirection { rows.removeLast() }
        if request.sql.reversed { rows.reverse() }
        let forward = request.after?.forward ?? true
        var next: String?
        var prev: String?
        if let last = rows.last, forward ? hasMoreInWalkDirection : true { next = PageRequest.cursor(last.seq, forward: true) }
        if let first = rows.first, request.after != nil, forward ? true : hasMoreInWalkDirection {
            prev = PageRequest.cursor(first.seq, forward: false)
        }
        return Page(items: rows.map(\.item), next: next, prev: prev, pageSize: request.pageSize)
    }

    /// The HAL envelope every v1 list uses: `{page_size, _embedded: {<name>: [...]}, _links: {self, next, prev}}`.
    public func envelope(name: String, path: String, query: [String: String], render: (Item) -> Any) -> [String: Any] {
        func href(_ cursor: String?) -> [String: String] {
            var q = query
            q["cursor"] = cursor
            q["page_size"] = String(pageSize)
            let qs = FormDecoding.encode(q.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
            return ["href": qs.isEmpty ? path : path + "?" + qs]
        }
        var links: [String: Any] = ["self": href(query["cursor"])]
        if let next { links["next"] = href(next) }
        if let prev { links["prev"] = href(prev) }
        return ["page_size": pageSize, "_embedded": [name: items.map(render)], "_links": links]
    }
}
