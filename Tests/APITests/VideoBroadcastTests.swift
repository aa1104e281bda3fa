@testable import API
import Testing
import VideoCodec

@Suite("A broadcast's object and files")
struct VideoBroadcastTests {
    static func broadcast(status: VideoBroadcasts.Broadcast.Status = .started, hls: Bool = true) -> VideoBroadcasts.Broadcast {
        VideoBroadcasts.Broadcast(id: "b1", sessionID: "1_s", projectID: "p", createdAt: 1, updatedAt: 2, status: status, hasAudio: true, hasVideo: true,
                                  resolution: "1280x720", maxBitrate: nil, maxDuration: 600, multiBroadcastTag: nil, hls: hls, dvr: true,
                                  rtmp: [.init(id: "yt", serverUrl: "rtmp://a/live/", streamName: "k1"), .init(id: nil, serverUrl: "rtmps://b/app", streamName: "k2")],
                                  streams: nil)
    }

    @Test("each output's status in its place: HLS first, then each RTMP server; connecting before any is known, ended once stopped")
    func statuses() throws {
        let running = Self.broadcast().json(hlsURL: "http://h/broadcast/b1/hls/live.m3u8", statuses: [.live, .offline, .connecting])
        let urls = try #require(running["broadcastUrls"] as? [String: Any])
        #expect(urls["hls"] as? String == "http://h/broadcast/b1/hls/live.m3u8" && urls["hlsStatus"] as? String == "live")
        let rtmp = try #require(urls["rtmp"] as? [[String: Any]])
        #expect(rtmp.map { $0["status"] as? String } == ["offline", "connecting"] && rtmp.map { $0["id"] as? String } == ["yt", ""])
        #expect((running["settings"] as? [String: [String: Bool]])?["hls"] == ["dvr": true, "lowLatency": false])
        let rtmpOnly = try #require(Self.broadcast(hls: false).json(hlsURL: "x", statuses: [.live, .offline])["broadcastUrls"] as? [String: Any])
        #expect(rtmpOnly["hls"] == nil && (rtmpOnly["rtmp"] as? [[String: Any]])?.map { $0["status"] as? String } == ["live", "offline"])
        let early = try #require(Self.broadcast().json(hlsURL: "x", statuses: nil)["broadcastUrls"] as? [String: Any])
        #expect(early["hlsStatus"] as? String == "connecting")
        let stopped = try #require(Self.broadcast(status: .stopped).json(hlsURL: "x", statuses: [.live, .live, .live])["broadcastUrls"] as? [String: Any])
        #expect(stopped["hlsStatus"] as? String == "ended" && (stopped["rtmp"] as? [[String: Any]])?.allSatisfy { $0["status"] as? String == "ended" } == true)
    }

    @Test("the outputs: the HLS directory named by the broadcast, each RTMP server's address joined with its stream's name")
    func outputs() {
        #expect(Self.broadcast().outputs(directory: "/d") == [.hls(directory: "/d/b1", dvr: true), .rtmp(url: "rtmp://a/live/k1"), .rtmp(url: "rtmps://b/app/k2")])
        var lowLatency = Self.broadcast()
        (lowLatency.dvr, lowLatency.lowLatency) = (false, true)
        let progress = HLSProgress()
        #expect(lowLatency.outputs(directory: "/d", progress: progress).first == .lowLatencyHLS(directory: "/d/b1", progress: progress))
        #expect((lowLatency.json(hlsURL: "u", statuses: nil)["settings"] as? [String: [String: Bool]])?["hls"] == ["dvr": false, "lowLatency": true])
    }

    @Test("only the playlist and numbered segments and parts are served from a broadcast's directory")
    func hlsNames() {
        for name in ["live.m3u8", "segment-0.ts", "segment-123456789.ts", "segment-3.0.ts", "segment-12.34.ts"] { #expect(VideoBroadcasts.isHLSName(name), "\(name)") }
        for name in ["", "..", "../x", "segment-.ts", "segment-1.ts.tmp", "segment--1.ts", "segment-1234567890.ts", "x.m3u8", "segment-1/../a.ts", "b1.json",
                     "segment-1..ts", "segment-1.2.3.ts", "segment-.1.ts", "segment-1.-1.ts", "segment-1.2.ts.tmp"] {
            #expect(!VideoBroadcasts.isHLSName(name), "\(name)")
        }
    }
}
