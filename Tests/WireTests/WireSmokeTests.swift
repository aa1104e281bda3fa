import Testing
@testable import Wire

@Suite struct WireSmoke {
    @Test func moduleLoads() { #expect(Bool(true)) }
}
