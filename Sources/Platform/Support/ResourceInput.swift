import Wire

/// The fields users and conversations share: `name`, `display_name`, `image_url`, `properties`.
/// On update an absent field stays untouched and `null` clears it.
public struct ResourceInput: Sendable {
    public var name: String?
    public var displayName: String??
    public var imageURL: String??
    public var properties: JSONValue?

    public init(name: String? = nil, displayName: String?? = nil, imageURL: String?? = nil, properties: JSONValue? = nil) {
        self.name = name
        self.displayName = displayName
        self.imageURL = imageURL
        self.properties = properties
    }

    public init(json: JSONValue) throws {
        guard case .object(let o) = json else { throw PlatformError.invalid("The body must be a JSON object.") }
        func optionalString(_ key: String) throws -> String?? {
            guard let v = o[key] else { return nil }
            if v.isNull { return .some(nil) }
            guard let s = v.stringValue else { throw PlatformError.invalid("\(key) must be a string.") }
            return .some(s)
        }
        if let n = o["name"] {
            guard let s = n.stringValue else { throw PlatformError.invalid("name must be a string.") }
            name = s
        }
        displayName = try optionalString("display_name")
        imageURL = try optionalString("image_url")
        if let p = o["properties"] {
            guard case .object = p else { throw PlatformError.invalid("properties must be an object.") }
            properties = p
        }
    }
}
