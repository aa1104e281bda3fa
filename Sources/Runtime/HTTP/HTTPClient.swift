import Foundation
import Synchronization
import Wire

public struct HTTPClientRequest: Sendable {
    public var method: HTTPMethod
    public var url: String
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(method: HTTPMethod = .GET, url: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

public struct HTTPClientResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    public var text: String { String(decoding: body, as: UTF8.self) }
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T { try JSONDecoder().decode(T.self, from: Data(body)) }
}

public enum HTTPClientError: Error, CustomStringConvertible, Sendable {
    case badURL(String)
    case timeout
    case connectionClosed
    case responseTooLarge
    case malformedResponse(String)

    public var description: String {
        switch self {
        case .badURL(let u): return "not a usable http(s) URL: \(u)"
        case .timeout: return "the request timed out"
        case .connectionClosed: return "the connection closed before a complete response"
        case .responseTooLarge: return "the response is too large"
        case .malformedResponse(let d): return "malformed response: \(d)"
        }
    }
}

/// A small HTTP/1.1 client on our event loops: one connection per request, a whole-request deadline,
/// and a bounded response size. Used for webhooks, the CLI and the example app server.
public struct HTTPClient: Sendable {
    public let group: EventLoopGroup
    public let tls: TLSContext?
    public var maxResponseBytes = 16 << 20

    public init(group: EventLoopGroup, tls: TLSContext? = nil) {
        self.group = group
        self.tls = tls
    }

    public func execute(_ request: HTTPClientRequest, timeout: Duration = .seconds(10)) async throws -> HTTPClientResponse {
        guard let url = URLComponents(string: request.url), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else {
            throw HTTPClientError.badURL(request.url)
        }
        let secure = scheme == "https"
        let port = UInt16(url.port ?? (secure ? 443 : 80))
        // The name's lookup counts against the whole request's deadline.
        let (addresses, timeout) = try await NameResolver.shared.addresses(of: host, port: port, within: timeout)
        var target = url.percentEncodedPath.isEmpty ? "/" : url.percentEncodedPath
        if let q = url.percentEncodedQuery { target += "?" + q }
        var head = HTTPRequestHead(method: request.method, target: target, headers: request.headers)
        let defaultPort = secure ? 443 : 80
        head.headers["Host"] = url.port.map { $0 == defaultPort ? host : "\(host.contains(":") ? "[\(host)]" : host):\($0)" } ?? host
        head.headers["Connection"] = "close"
        if head.headers["user-agent"] == nil { head.headers["User-Agent"] = "switchboard" }
        if !request.body.isEmpty || [.POST, .PUT, .PATCH].contains(request.method) {
            head.headers["Content-Length"] = String(request.body.count)
        }
        var out: [UInt8] = []
        head.serialize(into: &out)
        out.append(contentsOf: request.body)
        let requestBytes = out
        let tlsContext = secure ? try (tls ?? TLSContext(clientCAFile: nil)) : nil
        let loop = group.next()
        let maxBytes = maxResponseBytes
        let isHead = request.method == .HEAD
        return try await withCheckedThrowingContinuation { (cont: CheckedContinuation<HTTPClientResponse, Error>) in
            loop.execute {
                let exchange = ClientExchange(continuation: cont, request: requestBytes, maxBytes: maxBytes, isHead: isHead, loop: loop)
                exchange.timer = loop.schedule(after: timeout) { exchange.complete(.failure(HTTPClientError.timeout)) }
                TCPConnector.connect(toFirstOf: addresses[...], on: loop, timeout: timeout) { result in
                    switch result {
                    case .failure(let e): exchange.complete(.failure(e))
                    case .success(let (fd, address)):
                        do {
                            let stream: ByteStream = try tlsContext.map { try TLSStream(fd: fd, context: $0, serverName: host) } ?? PlainStream(fd: fd)
                            let channel = Channel(loop: loop, fd: fd, stream: stream, remote: address)
                            exchange.channel = channel
                            channel.activate(handler: exchange)
                        } catch {
                            Glibc.close(fd)
                            exchange.complete(.failure(error))
                        }
                    }
                }
            }
        }
    }

    /// Convenience for JSON APIs.
    public func send(_ method: HTTPMethod, _ url: String, headers: HTTPHeaders = HTTPHeaders(), json: (any Encodable)? = nil,
                     timeout: Duration = .seconds(10)) async throws -> HTTPClientResponse {
        var headers = headers
        var body: [UInt8] = []
        if let json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.withoutEscapingSlashes]
            body = try [UInt8](encoder.encode(json))
            headers["Content-Type"] = "application/json"
        }
        return try await execute(HTTPClientRequest(method: method, url: url, headers: headers, body: body), timeout: timeout)
    }
}

/// One request/response over one connection, on one loop.
final class ClientExchange: ChannelHandler, @unchecked Sendable {
    // Invariant: touched only on `loop`.
    let loop: EventLoop
    private var continuation: CheckedContinuation<HTTPClientResponse, Error>?
    private let request: [UInt8]
    private var parser: HTTPResponseParser
    private let maxBytes: Int
    private var head: HTTPResponseHead?
    private var body: [UInt8] = []
    var channel: Channel?
    var timer: TimerHandle?

    init(continuation: CheckedContinuation<HTTPClientResponse, Error>, request: [UInt8], maxBytes: Int, isHead: Bool, loop: EventLoop) {
        self.continuation = continuation
        self.request = request
        self.maxBytes = maxBytes
        self.loop = loop
        // The parser's own body limit (1 MiB by default) must not undercut maxResponseBytes.
        parser = HTTPResponseParser(limits: HTTPParserLimits(maxBody: maxBytes))
        parser.requestMethod = isHead ? .HEAD : .GET
    }

    func channelActive(_ channel: Channel) { channel.write(request) }

    func channelRead(_ channel: Channel, _ bytes: UnsafeRawBufferPointer) {
        parser.append(bytes)
        drain(eof: false)
    }

    private func drain(eof: Bool) {
        do {
            var pending: HTTPResponseParseEvent? = nil
            while let event = try (pending ?? parser.next()) ?? (eof ? parser.finish() : nil) {
                pending = nil
                switch event {
                case .head(let h):
                    if h.status >= 100 && h.status < 200 { continue }
                    head = h
                case .body(let chunk):
                    body.append(contentsOf: chunk)
                    if body.count > maxBytes { complete(.failure(HTTPClientError.responseTooLarge)); return }
                case .end:
                    guard let head else { continue }
                    complete(.success(HTTPClientResponse(status: head.status, headers: head.headers, body: body)))
                    return
                }
            }
            if eof { complete(.failure(HTTPClientError.connectionClosed)) }
            _ = pending
        } catch let error as HTTPParseError {
            complete(.failure(HTTPClientError.malformedResponse(error.detail)))
        } catch {
            complete(.failure(error))
        }
    }

    func channelInactive(_ channel: Channel) {
        drain(eof: true)
    }

    func complete(_ result: Result<HTTPClientResponse, Error>) {
        guard let c = continuation else { return }
        continuation = nil
        loop.cancel(timer)
        if let ch = channel, ch.isOpen { ch.close() }
        c.resume(with: result)
    }
}

import Glibc
