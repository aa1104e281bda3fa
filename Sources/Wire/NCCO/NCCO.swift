/// A call script: the actions a leg runs one at a time (the Voice API's NCCO).
///
/// `parse` validates the whole document before returning anything, so a document with one bad action is
/// never half run; the error names the action's index and the field.
public struct NCCO: Sendable, Hashable {
    public enum Limits {
        public static let actions = 100
        public static let textCharacters = 1500
        public static let payloadBytes = 8192
        public static let conversationName = 200
        public static let legList = 50
        /// Phrases in an input's speech `context`.
        public static let speechContext = 100
    }

    public var actions: [NCCOAction]

    public init(_ actions: [NCCOAction]) { self.actions = actions }

    /// Parses JSON text.
    public static func parse(_ bytes: [UInt8]) throws(NCCOError) -> NCCO {
        let value: JSONValue
        do { value = try JSONParser.parse(bytes) } catch { throw NCCOError(.invalid("the NCCO is not valid JSON")) }
        return try parse(value)
    }

    /// Validates a decoded document.
    public static func parse(_ value: JSONValue) throws(NCCOError) -> NCCO {
        guard case .array(let items) = value else { throw NCCOError(.notAnArray) }
        guard !items.isEmpty else { throw NCCOError(.empty) }
        guard items.count <= Limits.actions else { throw NCCOError(.tooManyActions(limit: Limits.actions)) }
        var actions: [NCCOAction] = []
        actions.reserveCapacity(items.count)
        for (i, item) in items.enumerated() { actions.append(try NCCOAction.parse(item, index: i)) }
        return NCCO(actions)
    }
}
