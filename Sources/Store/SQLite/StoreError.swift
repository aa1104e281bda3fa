/// A failure from SQLite or from schema management.
public enum StoreError: Error, Equatable, Sendable {
    /// Which kind of constraint a write violated (SQLite extended result codes).
    public enum Constraint: Sendable, Equatable {
        case unique, primaryKey, foreignKey, notNull, check, other
    }

    /// A constraint violation; `.unique` and `.primaryKey` are what an API maps to 409 Conflict.
    case constraint(Constraint, message: String)
    /// The database stayed locked by another connection past the busy timeout.
    case busy(message: String)
    /// Any other SQLite failure, with its extended result code.
    case sqlite(code: Int32, message: String)
    /// The file was migrated by newer code; opening it with this build could corrupt it.
    case schemaTooNew(database: Int, supported: Int)
    case migrationFailed(version: Int, name: String, message: String)
    /// A programming error: bad migration list, several statements passed to `execute`, wrong binding count.
    case misuse(String)

    /// True for UNIQUE and PRIMARY KEY violations.
    public var isUniqueViolation: Bool {
        if case .constraint(let kind, _) = self { return kind == .unique || kind == .primaryKey }
        return false
    }

    /// Maps an SQLite extended result code to the matching case
    /// (https://sqlite.org/rescode.html).
    static func from(code: Int32, message: String) -> StoreError {
        switch code & 0xFF {
        case 19:  // SQLITE_CONSTRAINT
            let kind: Constraint = switch code {
            case 2067: .unique        // SQLITE_CONSTRAINT_UNIQUE
            case 1555: .primaryKey    // SQLITE_CONSTRAINT_PRIMARYKEY
            case 787: .foreignKey     // SQLITE_CONSTRAINT_FOREIGNKEY
            case 1299: .notNull       // SQLITE_CONSTRAINT_NOTNULL
            case 275: .check          // SQLITE_CONSTRAINT_CHECK
            default: .other
            }
            return .constraint(kind, message: message)
        case 5, 6:  // SQLITE_BUSY, SQLITE_LOCKED
            return .busy(message: message)
        default:
            return .sqlite(code: code, message: message)
        }
    }
}
