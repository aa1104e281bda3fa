import Platform
import Testing

@Suite("Video session ids")
struct VideoSessionIDTests {
    @Test("the project inside a session id", arguments: [
        ("1_MX5vdGhlcmtleX5-MTcwMDAwMDAwMDAwMH5hYmN-UH5-", "otherkey"),
        ("2_whatever", nil),
        ("1_!!!", nil),
    ])
    func sessionOwner(id: String, owner: String?) {
        #expect(VideoSessions.owner(ofSessionID: id) == owner)
    }
}
