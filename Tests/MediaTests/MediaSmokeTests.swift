import Testing
@testable import Media

@Suite struct MediaSmoke {
    @Test func moduleLoads() { #expect(Bool(true)) }
}
