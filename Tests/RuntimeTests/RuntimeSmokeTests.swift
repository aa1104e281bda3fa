import Testing
@testable import Runtime

@Suite struct RuntimeSmoke {
    @Test func moduleLoads() { #expect(Bool(true)) }
}
