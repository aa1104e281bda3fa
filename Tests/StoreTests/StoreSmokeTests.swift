import Testing
@testable import Store

@Suite struct StoreSmoke {
    @Test func moduleLoads() { #expect(Bool(true)) }
}
