import Runtime

/// The event loop threads every session, REST call and media transport of this process share:
/// one for sockets (WebSocket, HTTP), one for media (UDP, 20 ms ticks). Started on first use.
public enum ClientLoops {
    static let network = EventLoopGroup(threads: 1, name: "sb-client")
    static let media: EventLoop = {
        let loop = EventLoop(index: 0)
        loop.startThread(name: "sb-client-media")
        return loop
    }()
    static let http = HTTPClient(group: network)

    /// Stops the client's loop threads and waits until they are out of their loops; true when both
    /// are. A program calls this before it exits: `exit` runs OpenSSL's atexit cleanup, which frees
    /// its global locks, and a loop thread still calling into OpenSSL then (the network loop masking
    /// a WebSocket frame with `RAND_bytes`, the media loop protecting SRTP) takes a freed lock and the
    /// process dies with SIGSEGV. Sessions and media stop working from here on.
    @discardableResult
    public static func shutdown(timeout: Duration = .seconds(5)) -> Bool {
        let networkDone = network.shutdownAndWait(timeout: timeout)
        let mediaDone = media.stopAndWait(timeout: timeout)
        return networkDone && mediaDone
    }
}
