import Testing
@testable import Crypto

@Suite("Randomness and UUIDs")
struct RandomTests {
    @Test("secure random gives the requested length and differs between calls")
    func secureRandom() {
        #expect(SecureRandom.bytes(0).isEmpty)
        #expect(SecureRandom.bytes(33).count == 33)
        #expect(SecureRandom.bytes(32) != SecureRandom.bytes(32))
        let hex = SecureRandom.hex(16)
        #expect(hex.count == 32)
        #expect(hex == hex.lowercased())
    }

    @Test("UUIDs are lower-case RFC 4122 version 4")
    func uuid() {
        var seen = Set<String>()
        for _ in 0..<200 {
            let id = SecureRandom.uuid4()
            #expect(UUID4.isValid(id))
            #expect(id == id.lowercased())
            #expect(Array(id)[14] == "4")
            #expect("89ab".contains(Array(id)[19]))
            seen.insert(id)
        }
        #expect(seen.count == 200)
        #expect(!UUID4.isValid("not-a-uuid"))
        #expect(!UUID4.isValid("aaaaaaaa-bbbb-1ccc-8ddd-eeeeeeeeeeee"))
    }

    @Test("an injected seeded source is deterministic")
    func seeded() {
        #expect(SeededRandom(seed: 1).bytes(20) == SeededRandom(seed: 1).bytes(20))
        #expect(SeededRandom(seed: 1).bytes(20) != SeededRandom(seed: 2).bytes(20))
        #expect(UUID4.generate(using: SeededRandom(seed: 9)) == UUID4.generate(using: SeededRandom(seed: 9)))
        let source = SeededRandom(seed: 3)
        for _ in 0..<100 { #expect(source.uniform(below: 7) < 7) }
    }
}
