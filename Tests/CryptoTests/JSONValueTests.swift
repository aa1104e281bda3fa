import Foundation
import Testing
import Wire

@Suite("JSONValue")
struct JSONValueTests {
    @Test("decodes every JSON kind and re-encodes it")
    func roundTrip() throws {
        let text = #"{"a":null,"b":true,"c":1,"d":-2.5,"e":"s","f":[1,"x",false],"g":{"h":{}}}"#
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(value["a"] == .null)
        #expect(value["b"]?.boolValue == true)
        #expect(value["c"]?.intValue == 1)
        #expect(value["d"]?.doubleValue == -2.5)
        #expect(value["d"]?.intValue == nil)
        #expect(value["e"]?.stringValue == "s")
        #expect(value["f"]?[1] == "x")
        #expect(value["f"]?[9] == nil)
        #expect(value["g"]?["h"] == .object([:]))
        #expect(value["missing"] == nil)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let again = try JSONDecoder().decode(JSONValue.self, from: encoder.encode(value))
        #expect(again == value)
        #expect(String(decoding: try encoder.encode(value), as: UTF8.self) == text)
    }

    @Test("booleans stay booleans and numbers stay numbers")
    func noBridging() throws {
        let v = try JSONDecoder().decode(JSONValue.self, from: Data("[true,1,0,false]".utf8))
        #expect(v == [true, 1, 0, false])
    }

    @Test("huge and fractional numbers do not pretend to be Ints")
    func intValue() {
        #expect(JSONValue.number(1e300).intValue == nil)
        #expect(JSONValue.number(.infinity).intValue == nil)
        #expect(JSONValue.number(4_102_444_800).intValue == 4_102_444_800)
        #expect(JSONValue.string("1").intValue == nil)
    }
}
