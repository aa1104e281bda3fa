import Testing
@testable import Crypto

@Suite struct CryptoSmoke {
    @Test func moduleLoads() { #expect(Bool(true)) }
}
