import Testing
@testable import API

@Suite struct APISmoke {
    @Test func moduleLoads() { #expect(Bool(true)) }
}
