import Foundation
import Testing
import Wire

@Suite("JSONParser")
struct JSONParserTests {
    @Test("parses what JSONDecoder parses, to the same value", arguments: [
        #"{"alg":"RS256","typ":"JWT"}"#,
        #"{"application_id":"aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee","iat":1700000000,"exp":1700000900.5,"jti":"x","acl":{"paths":{"/*/users/**":{}}}}"#,
        #" [1, -0, 0.5, -1.25e3, 1E-2, 12345678901234567890, true, false, null, "", "a\"b\\c\/d\b\f\n\r\t"] "#,
        #"{"emoji":"\ud83d\ude00 \u00e9 é 日本","nested":[[[{"a":[]}]]]}"#,
        #""plain""#, "0", "-12", "1e308",
    ])
    func agreesWithJSONDecoder(text: String) throws {
        let expected = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(try JSONParser.parse(text) == expected)
    }

    @Test("refuses malformed input with a reason and an offset", arguments: [
        ("", JSONParseError.Reason.truncated),
        ("{", .truncated),
        (#"{"a":1,}"#, .unexpectedByte),
        (#"{"a":1 "b":2}"#, .unexpectedByte),
        (#"{"a":1,"a":2}"#, .duplicateKey),
        ("[1,2] x", .trailingBytes),
        ("01", .badNumber),
        ("1.", .truncated),
        ("-", .truncated),
        ("1e+", .truncated),
        ("+1", .unexpectedByte),
        ("tru", .truncated),
        ("nul!", .unexpectedByte),
        ("\"a\u{01}b\"", .controlCharacter),
        (#""\x""#, .badEscape),
        (#""\ud800""#, .badEscape),
        (#""\u12G4""#, .badEscape),
        ("\"abc", .truncated),
        ("1e999", .badNumber),
    ])
    func refuses(text: String, reason: JSONParseError.Reason) {
        #expect(throws: JSONParseError.self) { try JSONParser.parse(text) }
        do {
            _ = try JSONParser.parse(text)
        } catch {
            #expect(error.reason == reason)
            #expect(error.offset <= text.utf8.count)
        }
    }

    @Test("invalid UTF-8 and deep nesting are refused, not crashed on")
    func hostileInput() {
        #expect(throws: JSONParseError(.invalidUTF8, at: 1)) { try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(deep) }
        let ok = String(repeating: "[", count: JSONParser.maxDepth) + String(repeating: "]", count: JSONParser.maxDepth)
        #expect((try? JSONParser.parse(ok)) != nil)
    }

    @Test("every prefix of a valid document is refused, never crashes")
    func prefixes() {
        let doc = Array(#"{"a":[1,2.5e1,"x\u0041\n"],"b":{"c":null,"d":true}}"#.utf8)
        #expect((try? JSONParser.parse(doc)) != nil)
        for n in 0..<doc.count { #expect((try? JSONParser.parse(Array(doc[..<n]))) == nil) }
    }
}
