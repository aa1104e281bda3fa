import Foundation
import Runtime
import Telephony
import Wire

/// A development-only call handler (`serve --dev` with `SWITCHBOARD_DEV_SIP_ECHO=1`): answers every
/// routed inbound call with an RTP leg from the configured range that plays back what it hears, and
/// releases the leg when the call ends. The SIP benchmark and interop tests use it until the Voice
/// API takes inbound calls; it is never installed outside development mode.
final class EchoAnswerer: IncomingCallHandler {
    let edge: SIPEdge
    let pool: RTPPortPool
    let host: String

    init(edge: SIPEdge, pool: RTPPortPool, host: String) {
        self.edge = edge
        self.pool = pool
        self.host = host
    }

    /// Runs on the edge's loop.
    func incomingCall(_ call: IncomingCall) {
        guard let offer = call.offer else { return call.reject(status: 488) }
        let probe = AudioSessionConfig(address: host, port: 9)
        guard let (_, negotiated) = try? PlainRTPNegotiator.answer(offer, local: probe, sessionID: 1, version: 1) else {
            return call.reject(status: 488)
        }
        let leg: RTPLeg
        do {
            leg = try RTPLeg(loop: edge.loop, pool: pool, host: host, negotiated: negotiated)
        } catch {
            return call.reject(status: 503)
        }
        leg.onAudio = { [unowned leg] samples in leg.send(samples) }
        let local = AudioSessionConfig(address: host, port: leg.port)
        guard let (answer, _) = try? PlainRTPNegotiator.answer(offer, local: local, sessionID: UInt64(leg.port), version: 1) else {
            leg.close()
            return call.reject(status: 488)
        }
        call.answer(sdp: answer)
        let loop = edge.loop
        Task {
            for await _ in call.events {}
            loop.execute { leg.close() }
        }
    }
}
