/// Why an NCCO was refused: which action (by index, from 0), which field, and what is wrong with it.
///
/// A document is validated whole before any of it runs, so the first error found is the one reported
/// and nothing of the document has been executed.
public struct NCCOError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Reason: Sendable, Hashable {
        /// The document is not a JSON array of objects.
        case notAnArray
        case empty
        case tooManyActions(limit: Int)
        case notAnObject
        case unknownAction(String)
        case missing
        case wrongType(expected: String)
        case outOfRange(String)
        case invalid(String)
        /// A documented option this server does not offer (`machineDetection`, speech input).
        case unsupported
        case unknownField
    }

    /// The action's index in the document; nil for errors of the document itself.
    public var index: Int?
    /// The action's name when it has one.
    public var action: String?
    /// The field, dotted for nested ones (`dtmf.maxDigits`, `endpoint[0].number`).
    public var field: String?
    public var reason: Reason

    public init(index: Int? = nil, action: String? = nil, field: String? = nil, _ reason: Reason) {
        self.index = index
        self.action = action
        self.field = field
        self.reason = reason
    }

    /// Short machine-readable code, one per reason.
    public var code: String {
        switch reason {
        case .notAnArray: "ncco-not-an-array"
        case .empty: "ncco-empty"
        case .tooManyActions: "ncco-too-many-actions"
        case .notAnObject: "ncco-action-not-an-object"
        case .unknownAction: "ncco-unknown-action"
        case .missing: "ncco-missing-field"
        case .wrongType: "ncco-wrong-type"
        case .outOfRange: "ncco-out-of-range"
        case .invalid: "ncco-invalid-value"
        case .unsupported: "ncco-unsupported-option"
        case .unknownField: "ncco-unknown-field"
        }
    }

    public var description: String {
        var place = ""
        if let index { place = "action \(index)" + (action.map { " (\($0))" } ?? "") }
        if let field { place += (place.isEmpty ? "" : ": ") + field }
        let what: String
        switch reason {
        case .notAnArray: what = "the NCCO must be a JSON array of actions"
        case .empty: what = "the NCCO has no actions"
        case .tooManyActions(let limit): what = "the NCCO has more than \(limit) actions"
        case .notAnObject: what = "an action must be a JSON object"
        case .unknownAction(let name): what = "unknown action '\(name)'"
        case .missing: what = "is required"
        case .wrongType(let expected): what = "must be \(expected)"
        case .outOfRange(let range): what = "must be \(range)"
        case .invalid(let why): what = why
        case .unsupported: what = "is not supported by this server"
        case .unknownField: what = "is not a field of this action"
        }
        return place.isEmpty ? what : place + " " + what
    }
}
