import Testing
@testable import Wire

/// FIPS 180-4 SHA-1, only to check the handshake against RFC 6455's worked example.
func testSHA1(_ message: [UInt8]) -> [UInt8] {
    var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
    var data = message
    let bitLength = UInt64(message.count) * 8
    data.append(0x80)
    while data.count % 64 != 56 { data.append(0) }
    for shift in stride(from: 56, through: 0, by: -8) { data.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
    func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 { (x << n) | (x >> (32 - n)) }
    for block in stride(from: 0, to: data.count, by: 64) {
        var w = [UInt32](repeating: 0, count: 80)
        for i in 0..<16 {
            w[i] = (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(data[block + i * 4 + $1]) }
        }
        for i in 16..<80 { w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1) }
        var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
        for i in 0..<80 {
            let (f, k): (UInt32, UInt32) =
                switch i {
                case 0..<20: ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (b ^ c ^ d, 0xCA62_C1D6)
                }
            let t = rotl(a, 5) &+ f &+ e &+ k &+ w[i]
            (e, d, c, b, a) = (d, c, rotl(b, 30), a, t)
        }
        h[0] &+= a; h[1] &+= b; h[2] &+= c; h[3] &+= d; h[4] &+= e
    }
    return h.flatMap { word in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: word >> $0) } }
}

@Suite("WebSocket handshake")
struct WebSocketHandshakeTests {
    static let key = "dGhlIHNhbXBsZSBub25jZQ=="

    static func request(_ extra: [(String, String)] = [], drop: String? = nil, method: HTTPMethod = .GET,
                        version: HTTPVersion = .http1_1) -> HTTPRequestHead {
        var headers: HTTPHeaders = [
            "Host": "server.example.com", "Upgrade": "websocket", "Connection": "Upgrade",
            "Sec-WebSocket-Key": key, "Sec-WebSocket-Version": "13",
        ]
        if let drop { headers.remove(name: drop) }
        for (name, value) in extra { headers.replaceOrAdd(name: name, value: value) }
        return HTTPRequestHead(method: method, target: "/chat", version: version, headers: headers)
    }

    @Test("RFC 6455 section 1.3 accept value")
    func acceptValue() {
        #expect(WebSocketHandshake.acceptValue(forKey: Self.key, sha1: testSHA1) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test("a valid upgrade request is accepted and answered with 101")
    func validRequest() throws {
        let request = try WebSocketHandshake.validateUpgradeRequest(
            Self.request([("Upgrade", "WebSocket"), ("Connection", "keep-alive, upgrade"), ("Sec-WebSocket-Protocol", "chat, superchat")]))
        #expect(request.key == Self.key)
        #expect(request.protocols == ["chat", "superchat"])
        let response = WebSocketHandshake.upgradeResponse(for: request, protocol: "chat", sha1: testSHA1)
        #expect(response.status == 101)
        #expect(response.headers["sec-websocket-accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(try WebSocketHandshake.validateUpgradeResponse(response, key: Self.key, protocols: ["chat"], sha1: testSHA1) == "chat")
    }

    @Test("invalid upgrade requests are refused with 400, or 426 for the version")
    func invalidRequests() {
        let cases: [(HTTPRequestHead, Int, WebSocketHandshakeError.Kind)] = [
            (Self.request(method: .POST), 400, .notGET),
            (Self.request(version: .http1_0), 400, .notHTTP11),
            (Self.request(drop: "Upgrade"), 400, .missingUpgrade),
            (Self.request([("Upgrade", "h2c")]), 400, .missingUpgrade),
            (Self.request([("Connection", "keep-alive")]), 400, .missingConnectionUpgrade),
            (Self.request(drop: "Sec-WebSocket-Version"), 400, .missingVersion),
            (Self.request([("Sec-WebSocket-Version", "8")]), 426, .unsupportedVersion),
            (Self.request(drop: "Sec-WebSocket-Key"), 400, .invalidKey),
            (Self.request([("Sec-WebSocket-Key", "dGhlIHNhbXBsZQ==")]), 400, .invalidKey),
            (Self.request([("Sec-WebSocket-Key", "not base64 at all!!!!!!!")]), 400, .invalidKey),
        ]
        for (head, status, kind) in cases {
            do {
                _ = try WebSocketHandshake.validateUpgradeRequest(head)
                Issue.record("accepted \(head.headers)")
            } catch {
                #expect(error.status == status)
                #expect(error.kind == kind)
                #expect(error.responseHead.status == status)
                if status == 426 { #expect(error.responseHead.headers["Sec-WebSocket-Version"] == "13") }
            }
        }
    }

    @Test("the client request carries a key made from the injected nonce")
    func clientRequest() throws {
        let key = WebSocketHandshake.clientKey(nonce: Array("the sample nonce".utf8))
        #expect(key == Self.key)
        let head = WebSocketHandshake.upgradeRequest(target: "/chat", host: "server.example.com", key: key, protocols: ["chat"])
        let request = try WebSocketHandshake.validateUpgradeRequest(head)
        #expect(request.protocols == ["chat"])
    }

    @Test("a server answer with the wrong accept value is refused")
    func wrongAccept() {
        let response = HTTPResponseHead(status: 101, headers: ["Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Accept": "bogus"])
        #expect(throws: WebSocketHandshakeError.self) {
            try WebSocketHandshake.validateUpgradeResponse(response, key: Self.key, sha1: testSHA1)
        }
    }
}

@Suite("Base64")
struct Base64Tests {
    @Test("RFC 4648 section 10 vectors", arguments: [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ])
    func vectors(_ plain: String, _ encoded: String) {
        #expect(Base64.encode(Array(plain.utf8)) == encoded)
        #expect(Base64.decode(encoded) == Array(plain.utf8))
    }

    @Test("url-safe alphabet without padding")
    func urlSafe() {
        let data: [UInt8] = [0xFB, 0xFF, 0xBF]
        #expect(Base64.encode(data) == "+/+/")
        #expect(Base64URL.encode(data) == "-_-_")
        #expect(Base64URL.decode("-_-_") == data)
        #expect(Base64URL.decode("Zm8") == Array("fo".utf8))
    }

    @Test("malformed input is rejected", arguments: ["Z", "Zm9v=", "Zm===", "Zm 9v", "Zm9v\n", "-_-_", "Z=m9"])
    func malformed(_ text: String) {
        #expect(Base64.decode(text) == nil)
    }
}
