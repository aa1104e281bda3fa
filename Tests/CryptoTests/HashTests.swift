import Wire
import Testing
@testable import Crypto

@Suite("Hashes and HMAC")
struct HashTests {
    @Test("SHA-256 matches FIPS 180-2 examples")
    func sha256Vectors() {
        #expect(Hex.encode(SHA256.hash("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Hex.encode(SHA256.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Hex.encode(SHA256.hash("abc".utf8)) == Hex.encode(SHA256.hash("abc")))
    }

    @Test("SHA-1 matches FIPS 180-1 examples")
    func sha1Vectors() {
        #expect(Hex.encode(SHA1.hash("abc")) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(Hex.encode(SHA1.hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))
            == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    }

    @Test("HMAC-SHA256 matches RFC 4231 test cases 1 and 2")
    func hmacSHA256() {
        let key1 = [UInt8](repeating: 0x0b, count: 20)
        #expect(Hex.encode(HMAC.sha256(key: key1, data: Array("Hi There".utf8)))
            == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(Hex.encode(HMAC.sha256(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8)))
            == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test("HMAC-SHA1 matches RFC 2202 test case 2, and an empty key works")
    func hmacSHA1() {
        #expect(Hex.encode(HMAC.sha1(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8)))
            == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
        #expect(HMAC.sha1(key: [UInt8](), data: [UInt8]()).count == 20)
        #expect(Hex.encode(HMAC.sha256(key: [UInt8](), data: [UInt8]()))
            == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test("constant-time compare agrees with ==")
    func constantTime() {
        #expect(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(constantTimeEquals([UInt8](), [UInt8]()))
    }
}
