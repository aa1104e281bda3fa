/// The one libFuzzer entry point for every target in Fuzz/; `SWITCHBOARD_FUZZ_TARGET` names the target.
/// One binary for all targets keeps the instrumented build of Wire to a single compile.
import Foundation

let fuzzTarget = ProcessInfo.processInfo.environment["SWITCHBOARD_FUZZ_TARGET"] ?? ""

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    switch fuzzTarget {
    case "Endpointer": return fuzzEndpointer(data, size)
    case "HTTPRequest": return fuzzHTTPRequest(data, size)
    case "Jitter": return fuzzJitter(data, size)
    case "MP3": return fuzzMP3(data, size)
    case "LayoutCSS": return fuzzLayoutCSS(data, size)
    case "NCCODocument": return fuzzNCCODocument(data, size)
    case "OggOpus": return fuzzOggOpus(data, size)
    case "Playout": return fuzzPlayout(data, size)
    case "RTCP": return fuzzRTCP(data, size)
    case "RTP": return fuzzRTP(data, size)
    case "SDP": return fuzzSDP(data, size)
    case "SDPAttribute": return fuzzSDPAttribute(data, size)
    case "SIP": return fuzzSIP(data, size)
    case "STUN": return fuzzSTUN(data, size)
    case "VideoRecording": return fuzzVideoRecording(data, size)
    case "WAV": return fuzzWAV(data, size)
    case "WebSocketFrame": return fuzzWebSocketFrame(data, size)
    default: fatalError("set SWITCHBOARD_FUZZ_TARGET to one of: Endpointer, HTTPRequest, Jitter, LayoutCSS, MP3, NCCODocument, OggOpus, Playout, RTCP, RTP, SDP, SDPAttribute, SIP, STUN, VideoRecording, WAV, WebSocketFrame")
    }
}
