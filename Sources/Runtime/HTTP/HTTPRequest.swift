import Foundation
import Wire

/// A request as routes see it: the parsed head, the whole body, and what routing and middleware added.
public struct HTTPRequest: Sendable {
    public var head: HTTPRequestHead
    public var body: [UInt8]
    public var remoteAddress: SocketAddress?
    public var isSecure: Bool
    /// Path parameters bound by the router (`:id` → value).
    public var parameters: [String: String] = [:]
    /// Set by the request-id middleware; echoed as `X-Request-Id`.
    public var id: String = ""
    /// The route pattern that matched, for metrics and logs.
    public var route: String = ""
    /// Who is calling, set by the authentication middleware.
    public var principal: (any Sendable)? = nil
    /// `scheme://host[:port][/path]` for absolute links in responses, from configuration (never from the
    /// request's `Host` header, which the client controls); empty makes links relative.
    public var baseURL: String = ""

    public init(head: HTTPRequestHead, body: [UInt8] = [], remoteAddress: SocketAddress? = nil, isSecure: Bool = false) {
        self.head = head
        self.body = body
        self.remoteAddress = remoteAddress
        self.isSecure = isSecure
    }

    public var method: HTTPMethod { head.method }
    public var path: String { head.path }
    public var headers: HTTPHeaders { head.headers }

    /// A path parameter; a missing one is a programming error in the route table, so it reads as empty.
    public func parameter(_ name: String) -> String { parameters[name] ?? "" }

    /// Query parameters, percent-decoded, last one wins.
    public var query: [String: String] { FormDecoding.decode(head.query ?? "") }

    /// The body as form fields (application/x-www-form-urlencoded).
    public var form: [String: String] { FormDecoding.decode(String(decoding: body, as: UTF8.self)) }

    /// Decodes a JSON body; anything malformed is a 400 with the decoder's explanation.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        if body.isEmpty { throw APIError.badRequest("A JSON body is required.", code: "invalid-json") }
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch let DecodingError.keyNotFound(key, ctx) {
            throw APIError.badRequest("Missing field '\(Self.path(ctx.codingPath + [key]))'.", code: "invalid-json")
        } catch let DecodingError.typeMismatch(_, ctx) {
            throw APIError.badRequest("Wrong type for '\(Self.path(ctx.codingPath))'.", code: "invalid-json")
        } catch let DecodingError.valueNotFound(_, ctx) {
            throw APIError.badRequest("Null value for '\(Self.path(ctx.codingPath))'.", code: "invalid-json")
        } catch let e as HTTPErrorConvertible {
            throw e
        } catch {
            throw APIError.badRequest("The body is not valid JSON.", code: "invalid-json")
        }
    }

    private static func path(_ keys: [CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}

/// application/x-www-form-urlencoded decoding.
public enum FormDecoding {
    public static func decode(_ text: String) -> [String: String] {
        var out: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = unescape(parts[0])
            let value = parts.count > 1 ? unescape(parts[1]) : ""
            out[key] = value
        }
        return out
    }

    public static func unescape(_ s: Substring) -> String {
        let plus = s.replacingOccurrences(of: "+", with: " ")
        return plus.removingPercentEncoding ?? plus
    }

    public static func encode(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.map { k, v in
            (k.addingPercentEncoding(withAllowedCharacters: allowed) ?? k) + "=" + (v.addingPercentEncoding(withAllowedCharacters: allowed) ?? v)
        }.joined(separator: "&")
    }
}
