import Testing
@testable import Media

@Suite("Key frame requests and detection")
struct KeyframeTests {
    @Test("at most one request per 500 ms; a request inside the window is sent when it ends")
    func throttle() {
        var throttle = KeyframeRequestThrottle()
        let sent = [
            throttle.request(now: ms(1_000)), throttle.request(now: ms(1_100)), throttle.request(now: ms(1_200)),
            throttle.due(now: ms(1_499)), throttle.due(now: ms(1_500)), throttle.due(now: ms(1_600)),
            throttle.request(now: ms(1_700)),
        ]
        #expect(sent == [true, false, false, false, true, false, false], "one now, the deferred ones collapse into one at +500 ms")
        throttle.keyframeReceived()
        let afterKeyframe = throttle.due(now: ms(2_100))
        #expect(!afterKeyframe, "a key frame satisfied the deferred request")
        let fresh = throttle.request(now: ms(2_100))
        #expect(fresh)
    }

    @Test("VP8 key frames are told from delta frames by the payload header")
    func vp8() {
        func check(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { KeyframeDetector.isVP8Keyframe($0.baseAddress!, length: $0.count) } }
        #expect(check([0x10, 0x00, 0x9D, 0x01, 0x2A]))          // S=1, P=0
        #expect(!check([0x10, 0x01, 0x00]))                      // P=1: inter frame
        #expect(!check([0x00, 0x00, 0x00]))                      // not a partition start
        #expect(check([0x90, 0x80, 0x81, 0x23, 0x00]))           // X, I with 15-bit picture id
        #expect(check([0x90, 0xE0, 0x12, 0x34, 0x40, 0x00]))     // X, I (7-bit), L, T/K: then P=0
        #expect(!check([0x90, 0x80]))                            // truncated
    }

    @Test("H.264 key frames: IDR, SPS, STAP-A with SPS, FU-A start of an IDR")
    func h264() {
        func check(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { KeyframeDetector.isH264Keyframe($0.baseAddress!, length: $0.count) } }
        #expect(check([0x65, 0x88]))
        #expect(check([0x67, 0x42]))
        #expect(check([0x78, 0x00, 0x02, 0x67, 0x42, 0x00, 0x02, 0x68, 0xCE]))
        #expect(check([0x7C, 0x85, 0x00]))
        #expect(!check([0x7C, 0x05, 0x00]), "FU-A continuation")
        #expect(!check([0x41, 0x9A]), "non-IDR slice")
        #expect(!check([0x78, 0x00, 0x09, 0x67]), "truncated STAP-A")
    }
}
