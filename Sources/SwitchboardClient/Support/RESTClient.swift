import Foundation
import Runtime
import Wire

/// JSON calls to the server's REST API with the session's user token (`Authorization: Bearer`).
struct RESTClient: Sendable {
    let base: URL
    let token: @Sendable () -> String
    let caFile: String?

    func call(_ method: HTTPMethod, _ path: String, query: [(String, String?)] = [], body: JSONValue? = nil,
              timeout: Duration = .seconds(10)) async throws(SessionError) -> JSONValue {
        var url = base.absoluteString + path
        let items = query.compactMap { k, v in v.map { "\(k)=\(Self.escape($0))" } }
        if !items.isEmpty { url += "?" + items.joined(separator: "&") }
        var headers = HTTPHeaders()
        let bearer = token()
        if !bearer.isEmpty { headers["Authorization"] = "Bearer " + bearer }
        headers["Accept"] = "application/json"
        var bytes: [UInt8] = []
        if let body {
            bytes = Array(Session.encode(body).utf8)
            headers["Content-Type"] = "application/json"
        }
        let response: HTTPClientResponse
        do {
            var client = ClientLoops.http
            if let caFile { client = HTTPClient(group: ClientLoops.network, tls: try TLSContext(clientCAFile: caFile)) }
            response = try await client.execute(HTTPClientRequest(method: method, url: url, headers: headers, body: bytes), timeout: timeout)
        } catch HTTPClientError.timeout {
            throw .timeout
        } catch {
            throw .unreachable(String(describing: error))
        }
        let json = response.body.isEmpty ? JSONValue.null : ((try? JSONParser.parse(response.body)) ?? .null)
        guard (200..<300).contains(response.status) else { throw Self.error(status: response.status, json: json, text: response.text) }
        return json
    }

    /// The typed error for an HTTP error answer (`{type, title, detail, code}`).
    static func error(status: Int, json: JSONValue, text: String) -> SessionError {
        let code = json["code"]?.stringValue ?? json["type"]?.stringValue.flatMap { $0.split(separator: "#").last.map(String.init) } ?? "http-\(status)"
        let detail = json["detail"]?.stringValue ?? json["title"]?.stringValue ?? String(text.prefix(200))
        switch status {
        case 401: return detail.lowercased().contains("expired") ? .tokenExpired : .invalidToken
        case 403: return .forbidden
        default: return .server(code: code, detail: detail)
        }
    }

    static func escape(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? s
    }
}
