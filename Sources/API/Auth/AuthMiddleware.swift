import Foundation
import Platform
import Runtime

/// Authenticates every request that carries credentials; routes then say what they require.
/// Bad credentials are a 401 with `WWW-Authenticate`, whatever the route.
struct AuthMiddleware: HTTPMiddleware {
    let authenticator: Authenticator

    func handle(_ request: HTTPRequest, next: HTTPHandler) async throws -> HTTPResponse {
        var request = request
        do {
            request.principal = try authenticator.authenticate(authorization: request.headers["authorization"])
        } catch .expired {
            throw APIError.unauthorized("The token has expired.", challenge: Self.challenge(request))
        } catch .oversizedACL(let why) {
            throw APIError.unauthorized("The token is refused: \(why).", challenge: Self.challenge(request))
        } catch {
            throw APIError.unauthorized("Missing or invalid credentials.", challenge: Self.challenge(request))
        }
        return try await next(request)
    }

    static func challenge(_ request: HTTPRequest) -> String {
        request.headers["authorization"]?.lowercased().hasPrefix("basic") == true ? "Basic realm=\"switchboard\"" : "Bearer realm=\"switchboard\""
    }
}

extension HTTPRequest {
    var caller: Principal? { principal as? Principal }

    /// Account-level routes: Basic auth (or, for the Numbers API, `api_key`/`api_secret` parameters).
    func requireAccount(authenticator: Authenticator? = nil, allowParameters: Bool = false) throws -> Account {
        switch caller {
        case .account(let a)?:
            return a
        case nil:
            if allowParameters, let authenticator {
                let params = query.merging(form) { a, _ in a }
                if let key = params["api_key"], let secret = params["api_secret"] {
                    do {
                        if case .account(let a) = try authenticator.account(key: key, secret: secret) { return a }
                    } catch {}
                    throw APIError.unauthorized("Missing or invalid credentials.", challenge: "Basic realm=\"switchboard\"")
                }
            }
            throw APIError.unauthorized("Account credentials (Basic auth) are required.", challenge: "Basic realm=\"switchboard\"")
        default:
            throw APIError.forbidden("This API needs account credentials, not a JWT.")
        }
    }

    /// Application-level routes: an application or user JWT whose ACL (if any) covers this path.
    func requireApplication() throws -> (Application, Principal) {
        guard let p = caller else {
            throw APIError.unauthorized("A Bearer JWT is required.", challenge: "Bearer realm=\"switchboard\"")
        }
        guard let app = p.application else { throw APIError.forbidden("This API needs an application or user JWT.") }
        if let acl = p.acl, !acl.allows(path: path) {
            throw APIError.forbidden("The token's ACL does not allow \(path).")
        }
        return (app, p)
    }

    /// Like `requireApplication` but refuses user tokens: only the app server may do this.
    func requireApplicationToken() throws -> Application {
        let (app, p) = try requireApplication()
        if case .user = p { throw APIError.forbidden("Only an application token may do this.") }
        return app
    }

    /// The JSON body as a JSONValue (400 when malformed).
    func json() throws -> JSONValue {
        try decode(JSONValue.self)
    }
}

import Wire
