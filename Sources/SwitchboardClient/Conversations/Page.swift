import Foundation
import Wire

/// One page of a cursor-paginated list; pass `nextCursor` back for the page after it.
public struct Page<Item: Sendable>: Sendable {
    public var items: [Item]
    public var nextCursor: String?
    public var previousCursor: String?

    public init(items: [Item], nextCursor: String? = nil, previousCursor: String? = nil) {
        self.items = items
        self.nextCursor = nextCursor
        self.previousCursor = previousCursor
    }

    /// Reads `_embedded.<key>` and the cursors of `_links.next` / `_links.prev`.
    init(json: JSONValue, key: String, item: (JSONValue) -> Item?) {
        items = (json["_embedded"]?[key]?.arrayValue ?? []).compactMap(item)
        nextCursor = Self.cursor(json["_links"]?["next"]?["href"]?.stringValue)
        previousCursor = Self.cursor(json["_links"]?["prev"]?["href"]?.stringValue)
        // A short page is the last one, whatever the links say.
        if let size = json["page_size"]?.intValue, items.count < size { nextCursor = nil }
    }

    static func cursor(_ href: String?) -> String? {
        guard let href, let parts = URLComponents(string: href) else { return nil }
        return parts.queryItems?.first { $0.name == "cursor" }?.value
    }
}

/// List order by creation.
public enum ListOrder: String, Sendable {
    case ascending = "asc"
    case descending = "desc"
}
