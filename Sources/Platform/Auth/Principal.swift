import Foundation

/// Who made a request, after authentication.
public enum Principal: Sendable {
    /// Account key and secret (Basic auth): account-level APIs.
    case account(Account)
    /// An application JWT without `sub`: anything inside that application.
    case application(Application, acl: ACL?, expiresAt: Date?)
    /// A user JWT (`sub` = user name): what its ACL and the access rules allow.
    case user(Application, User, acl: ACL?, expiresAt: Date?)

    public var application: Application? {
        switch self {
        case .account: nil
        case .application(let a, _, _), .user(let a, _, _, _): a
        }
    }

    public var user: User? {
        if case .user(_, let u, _, _) = self { return u }
        return nil
    }

    public var acl: ACL? {
        switch self {
        case .account: nil
        case .application(_, let acl, _), .user(_, _, let acl, _): acl
        }
    }

    public var expiresAt: Date? {
        switch self {
        case .account: nil
        case .application(_, _, let e), .user(_, _, _, let e): e
        }
    }
}
