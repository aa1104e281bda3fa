import Wire
import Testing
@testable import Crypto

@Suite("Base64, base64url and hex")
struct EncodingTests {
    /// RFC 4648 section 10 vectors.
    @Test("base64 matches RFC 4648 vectors", arguments: [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ])
    func base64Vectors(plain: String, encoded: String) {
        #expect(Base64.encode(plain) == encoded)
        #expect(Base64.decode(encoded) == Array(plain.utf8))
        #expect(Base64URL.encode(plain) == encoded.replacingOccurrences(of: "=", with: ""))
        #expect(Base64URL.decode(encoded) == Array(plain.utf8))
    }

    @Test("base64url uses - and _ and no padding")
    func urlAlphabet() {
        let bytes: [UInt8] = [0xfb, 0xff, 0xfe]
        #expect(Base64URL.encode(bytes) == "-__-")
        #expect(Base64.encode(bytes) == "+//+")
        #expect(Base64URL.decode("-__-") == bytes)
        #expect(Base64URL.encode([0xff]) == "_w")
        #expect(Base64URL.decode("_w") == [0xff])
        #expect(Base64URL.decode("_w==") == [0xff])
    }

    @Test("base64url decode refuses bad characters and impossible lengths", arguments: [
        "+//+", "ab/c", "a", "abcde", "ab c", "ab\n", "a=bc", "ab===", "Zg=a", "é",
    ])
    func strictDecode(input: String) {
        #expect(Base64URL.decode(input) == nil)
    }

    @Test("round trips every length up to 64")
    func roundTrip() {
        let random = SeededRandom(seed: 7)
        for n in 0...64 {
            let bytes = random.bytes(n)
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
            #expect(Hex.decode(Hex.encode(bytes)) == bytes)
        }
    }

    @Test("PEM bodies decode with line breaks when asked")
    func whitespace() {
        #expect(Base64.decode("Zm9v\nYmFy\r\n", ignoringWhitespace: true) == Array("foobar".utf8))
        #expect(Base64.decode("Zm9v\nYmFy") == nil)
    }

    @Test("hex rejects odd length and non-hex")
    func hex() {
        #expect(Hex.decode("0aFf") == [0x0a, 0xff])
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
    }
}
