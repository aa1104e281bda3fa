import Wire

/// A conversation (a room): `GET /v1/conversations/{id}`.
public struct Conversation: Sendable, Hashable, Identifiable {
    public var id: String
    public var name: String
    public var displayName: String?
    public var imageURL: String?
    public var state: String?
    /// The id of the conversation's latest event.
    public var sequenceNumber: Int
    public var properties: JSONValue

    /// What a list shows: the display name, else the name.
    public var title: String { displayName ?? name }

    init?(json: JSONValue) {
        guard let id = json["id"]?.stringValue else { return nil }
        self.id = id
        name = json["name"]?.stringValue ?? id
        displayName = json["display_name"]?.stringValue
        imageURL = json["image_url"]?.stringValue
        state = json["state"]?.stringValue
        sequenceNumber = json["sequence_number"]?.intValue ?? 0
        properties = json["properties"] ?? .object([:])
    }
}
