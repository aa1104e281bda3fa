import CShims
import Crypto
import Runtime
import Wire

/// The SIP user agent on an event loop: a UDP socket feeding `UserAgentCore`, its outputs sent,
/// its deadlines scheduled as loop timers, its call events handed to `onEvent` on the loop.
///
/// Confined to its loop: every method must be called there (`loop.execute`/`submit`), which is
/// what makes the unchecked Sendable conformance sound.
public final class SIPEndpoint: Selectable, @unchecked Sendable {
    public unowned let loop: EventLoop
    public let core: UserAgentCore
    public var port: UInt16 { socket.port }
    private let socket: SIPUDPSocket
    private let onEvent: (SIPEndpoint, CallEvent) -> Void
    private var timer: TimerHandle?
    private var timerDeadline: Instant?
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)

    /// Opens the socket and registers it; call on `loop`.
    public init(loop: EventLoop, config: UserAgentConfig, random: any RandomSource = SystemRandom(),
                onEvent: @escaping (SIPEndpoint, CallEvent) -> Void) throws(SIPTransportError) {
        self.loop = loop
        self.socket = try SIPUDPSocket(host: config.host, port: config.port)
        var effective = config
        effective.port = socket.port
        self.core = UserAgentCore(config: effective, random: random)
        self.onEvent = onEvent
        loop.register(fd: socket.fd, events: SB_EPOLLIN, handler: self)
    }

    deinit { buffer.deallocate() }

    public func close() {
        loop.cancel(timer)
        loop.unregister(fd: socket.fd)
    }

    public func handle(events: UInt32) {
        for _ in 0..<64 {
            guard let (n, peer) = socket.receive(into: buffer) else { break }
            perform(core.receive(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), from: peer, now: .now()))
        }
    }

    public func answer(_ id: CallID, sdp: SessionDescription) { perform(core.answer(id, sdp: sdp, now: .now())) }
    public func reject(_ id: CallID, status: Int) { perform(core.reject(id, status: status, now: .now())) }
    public func hangup(_ id: CallID) { perform(core.hangup(id, now: .now())) }

    @discardableResult
    public func invite(to: SIPURI, from: SIPAddress, sdp: SessionDescription, trunk: TrunkConfig) -> CallID {
        let (id, outputs) = core.invite(to: to, from: from, sdp: sdp, trunk: trunk, now: .now())
        perform(outputs)
        return id
    }

    private func perform(_ outputs: [UserAgentOutput]) {
        for output in outputs {
            switch output {
            case .send(let message, let peer): socket.send(message.serialize(), to: peer)
            case .event(let event): onEvent(self, event)
            }
        }
        reschedule()
    }

    private func reschedule() {
        guard let next = core.nextDeadline else {
            loop.cancel(timer)
            timer = nil
            timerDeadline = nil
            return
        }
        if let timerDeadline, timerDeadline == next { return }
        loop.cancel(timer)
        timerDeadline = next
        timer = loop.schedule(at: next) { [weak self] in
            guard let self else { return }
            self.timer = nil
            self.timerDeadline = nil
            self.perform(self.core.tick(now: .now()))
        }
    }
}
