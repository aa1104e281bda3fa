import Runtime

/// The event loop threads every session, REST call and media transport of this process share:
/// one for sockets (WebSocket, HTTP), one for media (UDP, 20 ms ticks). Started on first use.
enum ClientLoops {
    static let network = EventLoopGroup(threads: 1, name: "sb-client")
    static let media: EventLoop = {
        let loop = EventLoop(index: 0)
        loop.startThread(name: "sb-client-media")
        return loop
    }()
    static let http = HTTPClient(group: network)
}
