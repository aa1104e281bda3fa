import Foundation
import Store

/// The domain over one store: accounts, applications, users, numbers.
public final class PlatformCore: Sendable {
    public let db: any SQLStore
    public let clock: any WallClock
    public let accounts: Accounts
    public let applications: Applications
    public let users: Users
    public let numbers: Numbers
    public let conversations: Conversations
    public let videoSessions: VideoSessions
    public let calls: CallLegs
    public let sipTrunks: SIPTrunks
    public let sipCredentials: SIPCredentials
    public let sipBindings: SIPBindings

    /// Opens (and migrates) `<dataDirectory>/switchboard.db`; `:memory:` data directories are for tests.
    public init(dataDirectory: String, clock: any WallClock = SystemClock()) throws {
        let path = dataDirectory == ":memory:" ? ":memory:" : dataDirectory + "/switchboard.db"
        db = try Database(path: path)
        _ = try db.migrate(Schema.migrations)
        self.clock = clock
        accounts = Accounts(db: db, clock: clock, dataDirectory: dataDirectory)
        applications = Applications(db: db, clock: clock)
        users = Users(db: db, clock: clock)
        numbers = Numbers(db: db, clock: clock)
        videoSessions = VideoSessions(db: db, clock: clock)
        sipTrunks = SIPTrunks(db: db, clock: clock)
        sipCredentials = SIPCredentials(db: db, clock: clock, users: users)
        sipBindings = SIPBindings(db: db, clock: clock)
        conversations = Conversations(db: db, clock: clock, users: users, bus: LocalEventBus())
        calls = CallLegs(db: db, clock: clock, conversations: conversations)
        // Deleting an application or a trunk unlinks numbers in the store, behind `Numbers`' back.
        let numbers = numbers
        applications.onDelete { numbers.forgetRoutes() }
        sipTrunks.onChange { numbers.forgetRoutes() }
    }
}
