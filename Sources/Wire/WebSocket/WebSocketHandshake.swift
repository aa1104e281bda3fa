/// The HTTP Upgrade handshake of RFC 6455 section 4, minus the SHA-1, which callers
/// inject because Wire has no crypto.
public enum WebSocketHandshake {
    /// The fixed GUID appended to the client key before hashing (section 1.3).
    public static let magicGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// What a valid opening handshake asked for.
    public struct UpgradeRequest: Sendable, Hashable {
        /// Sec-WebSocket-Key as sent (base64 of 16 bytes).
        public var key: String
        /// Sec-WebSocket-Protocol values in preference order.
        public var protocols: [String]
        /// Sec-WebSocket-Extensions elements; none are implemented, so a server ignores them.
        public var extensions: [String]
    }

    /// Checks a client's opening handshake (section 4.2.1).
    ///
    /// A wrong Sec-WebSocket-Version is 426 carrying `Sec-WebSocket-Version: 13`
    /// (section 4.2.2); every other failure is 400.
    public static func validateUpgradeRequest(_ head: HTTPRequestHead) throws(WebSocketHandshakeError) -> UpgradeRequest {
        guard head.method == .GET else { throw .init(.notGET, "WebSocket upgrade must be GET, not \(head.method)") }
        guard head.version == .http1_1 else { throw .init(.notHTTP11, "WebSocket upgrade needs HTTP/1.1") }
        guard head.headers.tokens(for: "Upgrade").contains("websocket") else {
            throw .init(.missingUpgrade, "Upgrade does not name websocket")
        }
        guard head.headers.containsToken("upgrade", in: "Connection") else {
            throw .init(.missingConnectionUpgrade, "Connection does not include upgrade")
        }
        let versions = head.headers.values(for: "Sec-WebSocket-Version")
        guard !versions.isEmpty else { throw .init(.missingVersion, "Sec-WebSocket-Version missing") }
        guard versions.count == 1, versions[0] == "13" else {
            var error = WebSocketHandshakeError(
                .unsupportedVersion, "Sec-WebSocket-Version \(versions.joined(separator: ", ")) is not 13", status: 426)
            error.headers.add(name: "Sec-WebSocket-Version", value: "13")
            throw error
        }
        let keys = head.headers.values(for: "Sec-WebSocket-Key")
        guard keys.count == 1, let nonce = Base64.decode(keys[0]), nonce.count == 16 else {
            throw .init(.invalidKey, "Sec-WebSocket-Key must be one base64 value of 16 bytes")
        }
        return UpgradeRequest(
            key: keys[0],
            protocols: listElements(head.headers, "Sec-WebSocket-Protocol"),
            extensions: listElements(head.headers, "Sec-WebSocket-Extensions"))
    }

    /// Sec-WebSocket-Accept: base64(SHA-1(key + GUID)) (section 4.2.2 step 5.4).
    public static func acceptValue(forKey key: String, sha1: ([UInt8]) -> [UInt8]) -> String {
        Base64.encode(sha1(Array((key + magicGUID).utf8)))
    }

    /// The 101 response that completes a validated handshake.
    public static func upgradeResponse(
        for request: UpgradeRequest, protocol selected: String? = nil, sha1: ([UInt8]) -> [UInt8]
    ) -> HTTPResponseHead {
        var headers: HTTPHeaders = [
            "Upgrade": "websocket",
            "Connection": "Upgrade",
            "Sec-WebSocket-Accept": acceptValue(forKey: request.key, sha1: sha1),
        ]
        if let selected { headers.add(name: "Sec-WebSocket-Protocol", value: selected) }
        return HTTPResponseHead(status: 101, headers: headers)
    }

    /// A client key from 16 random bytes the caller supplies (section 4.1).
    public static func clientKey(nonce: [UInt8]) -> String {
        Base64.encode(nonce)
    }

    /// A client's opening handshake request (section 4.1).
    public static func upgradeRequest(
        target: String, host: String, key: String, protocols: [String] = [], origin: String? = nil,
        headers extra: HTTPHeaders = HTTPHeaders()
    ) -> HTTPRequestHead {
        var headers: HTTPHeaders = [
            "Host": host,
            "Upgrade": "websocket",
            "Connection": "Upgrade",
            "Sec-WebSocket-Key": key,
            "Sec-WebSocket-Version": "13",
        ]
        if !protocols.isEmpty { headers.add(name: "Sec-WebSocket-Protocol", value: protocols.joined(separator: ", ")) }
        if let origin { headers.add(name: "Origin", value: origin) }
        for field in extra { headers.add(name: field.name, value: field.value) }
        return HTTPRequestHead(method: .GET, target: target, headers: headers)
    }

    /// Checks the server's answer (section 4.1, client requirements 1-6); returns the
    /// subprotocol the server chose, if any.
    public static func validateUpgradeResponse(
        _ head: HTTPResponseHead, key: String, protocols: [String] = [], sha1: ([UInt8]) -> [UInt8]
    ) throws(WebSocketHandshakeError) -> String? {
        guard head.status == 101 else {
            throw .init(.notSwitchingProtocols, "server answered \(head.status), not 101", status: head.status)
        }
        guard head.headers.tokens(for: "Upgrade").contains("websocket") else {
            throw .init(.missingUpgrade, "Upgrade does not name websocket")
        }
        guard head.headers.containsToken("upgrade", in: "Connection") else {
            throw .init(.missingConnectionUpgrade, "Connection does not include upgrade")
        }
        guard head.headers.values(for: "Sec-WebSocket-Accept") == [acceptValue(forKey: key, sha1: sha1)] else {
            throw .init(.invalidAccept, "Sec-WebSocket-Accept does not match the key")
        }
        if !listElements(head.headers, "Sec-WebSocket-Extensions").isEmpty {
            throw .init(.unexpectedExtension, "server enabled an extension that was not offered")
        }
        let chosen = listElements(head.headers, "Sec-WebSocket-Protocol")
        guard let selected = chosen.first else { return nil }
        guard chosen.count == 1, protocols.contains(selected) else {
            throw .init(.unexpectedProtocol, "server chose a subprotocol that was not offered: \(selected)")
        }
        return selected
    }

    /// Comma-list elements with their case kept (subprotocol names are case-sensitive).
    private static func listElements(_ headers: HTTPHeaders, _ name: String) -> [String] {
        headers.values(for: name).flatMap { value in
            value.split(separator: ",").map { String(HTTPSyntax.trimmingWhitespace($0)) }.filter { !$0.isEmpty }
        }
    }
}
