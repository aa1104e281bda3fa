import Live
import Wire

extension RoomPush {
    /// The realtime message (docs/protocol.md, "Media (rtc:*)").
    var message: (type: String, body: JSONValue) {
        switch self {
        case .offer(let conversationID, let offer, let tracks):
            ("rtc:offer", ["conversation_id": .string(conversationID), "offer": .string(offer), "tracks": tracks.json])
        }
    }
}

extension [Track] {
    /// Which m-line carries whom: `[{mid, member_id, user_id, name, producer_id}]`.
    var json: JSONValue {
        .array(map { track in
            [
                "mid": .string(track.mid), "member_id": .string(track.memberID), "user_id": .string(track.userID),
                "name": .string(track.name), "producer_id": .string(track.producerID.rawValue),
            ]
        })
    }
}
