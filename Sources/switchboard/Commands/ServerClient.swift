import Crypto
import Foundation
import Runtime
import Wire

/// The REST API of a running server, through our own HTTP client. Every failure becomes one `CLIError` line.
struct ServerClient {
    enum Credentials {
        case basic(key: String, secret: String)
        case bearer(String)

        var header: String {
            switch self {
            case .basic(let k, let s): "Basic " + Base64.encode("\(k):\(s)")
            case .bearer(let t): "Bearer " + t
            }
        }
    }

    enum Body {
        case none
        case json(JSONValue)
        case form([(String, String)])
    }

    let baseURL: String
    let http: HTTPClient

    init(baseURL: String, caFile: String?) throws {
        self.baseURL = baseURL
        let secure = baseURL.lowercased().hasPrefix("https://")
        guard secure || baseURL.lowercased().hasPrefix("http://") else {
            throw CLIError("the server URL must start with http:// or https:// (got \(baseURL))")
        }
        let tls: TLSContext?
        do { tls = secure ? try TLSContext(clientCAFile: caFile) : nil } catch {
            throw CLIError("cannot use CA file \(caFile ?? "(system)"): \(error)")
        }
        http = HTTPClient(group: EventLoopGroup(threads: 1, name: "cli"), tls: tls)
    }

    /// Sends a request; returns the decoded JSON body (`.null` for an empty one). Non-2xx answers throw.
    @discardableResult
    func call(_ method: HTTPMethod, _ path: String, query: [(String, String)] = [], body: Body = .none,
              credentials: Credentials) async throws -> JSONValue {
        var url = baseURL + path
        if !query.isEmpty { url += "?" + FormDecoding.encode(query) }
        var headers = HTTPHeaders()
        headers["Authorization"] = credentials.header
        headers["Accept"] = "application/json"
        var bytes: [UInt8] = []
        switch body {
        case .none: break
        case .json(let v):
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.withoutEscapingSlashes]
            bytes = Array(try encoder.encode(v))
            headers["Content-Type"] = "application/json"
        case .form(let fields):
            bytes = Array(FormDecoding.encode(fields).utf8)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        }
        let response: HTTPClientResponse
        do {
            response = try await http.execute(HTTPClientRequest(method: method, url: url, headers: headers, body: bytes))
        } catch HTTPClientError.connectionClosed where baseURL.lowercased().hasPrefix("https://") {
            throw CLIError("cannot reach \(baseURL): the connection closed (is the server's certificate trusted? pass --ca FILE)")
        } catch {
            throw CLIError("cannot reach \(baseURL): \(String(describing: error).replacingOccurrences(of: "\n", with: " "))")
        }
        let json = response.body.isEmpty ? JSONValue.null : (try? JSONDecoder().decode(JSONValue.self, from: Data(response.body)))
        guard (200..<300).contains(response.status) else {
            throw CLIError(Self.describeFailure(status: response.status, json: json, text: response.text))
        }
        guard let json else { throw CLIError("the server answered \(response.status) with a body that is not JSON") }
        return json
    }

    /// `401 Unauthorized: Missing or invalid credentials.` from the API's error shape (or the raw text).
    static func describeFailure(status: Int, json: JSONValue?, text: String) -> String {
        let title = json?["title"]?.stringValue ?? json?["error-code-label"]?.stringValue
        let detail = json?["detail"]?.stringValue ?? json?["error_title"]?.stringValue
        var line = "server answered \(status)"
        if let title { line += " \(title)" }
        if let detail, detail != title { line += ": \(detail)" }
        if title == nil && detail == nil {
            let snippet = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
            if !snippet.isEmpty { line += ": " + String(snippet.prefix(200)) }
        }
        return line
    }
}
