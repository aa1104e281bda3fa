import Audio
import Foundation
import Runtime
import Synchronization
import Telephony
import Wire

/// Development only (`serve --dev`): a phone behind a loopback trunk, so calls can be tried with no
/// carrier. It is a SIP user agent of its own on another loopback port (the `dev-loopback` trunk points
/// at it): a call to its number leaves the server over SIP like any phone call, and this handler answers
/// it with an RTP leg that says a short prompt and then sends back what it hears.
///
/// With `SWITCHBOARD_DEV_SIP_ECHO=1` it runs on the server's own edge instead and answers every routed
/// inbound call, echo only (the SIP benchmark's far end).
final class TestPhone: IncomingCallHandler {
    static let number = "15550100"
    static let trunkName = "dev-loopback"
    static let promptText = "This is the Switchboard test phone. Say something, and you will hear it back."

    let edge: SIPEdge
    let pool: RTPPortPool
    let host: String
    let answerAll: Bool
    /// The prompt at each codec rate, rendered once in the background; a call that comes before it is
    /// ready rings until it is (a caller right after start hears the prompt too).
    private let prompts = Prompts()
    private let rendering: Task<Void, Never>?

    private final class Prompts: Sendable {
        let frames = Mutex<[SampleRate: [AudioFrame]]>([:])
    }

    init(edge: SIPEdge, pool: RTPPortPool, host: String, answerAll: Bool) {
        self.edge = edge
        self.pool = pool
        self.host = host
        self.answerAll = answerAll
        guard !answerAll else {
            rendering = nil
            return
        }
        rendering = Task { [prompts] in
            let synthesizer = SpeechSynthesizer(workers: 1)
            for rate in [SampleRate.hz8000, .hz48000] {
                let request = SpeechRequest(text: Self.promptText, language: "en-US", style: 0)
                if let frames = try? await synthesizer.synthesize(request, rate: rate) { prompts.frames.withLock { $0[rate] = frames } }
            }
        }
    }

    /// Runs on the edge's loop.
    func incomingCall(_ call: IncomingCall) {
        guard answerAll || call.number == Self.number else { return call.reject(status: 404) }
        guard let rendering, prompts.frames.withLock({ $0.count < 2 }) else { return take(call) }
        let loop = edge.loop
        Task {
            await rendering.value
            loop.execute { self.take(call) }
        }
    }

    private func take(_ call: IncomingCall) {
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
        let local = AudioSessionConfig(address: host, port: leg.port)
        guard let (answer, _) = try? PlainRTPNegotiator.answer(offer, local: local, sessionID: UInt64(leg.port), version: 1) else {
            leg.close()
            return call.reject(status: 488)
        }
        let prompt = answerAll ? [] : prompts.frames.withLock { $0[SampleRate(rawValue: leg.sampleRate) ?? .hz8000] } ?? []
        let player = PromptThenEcho(leg: leg, prompt: prompt)
        call.answer(sdp: answer)
        player.start()
        let loop = edge.loop
        Task {
            for await _ in call.events {}
            loop.execute { player.stop() }
        }
    }
}

extension TestPhone {
    /// The test phone's own view of numbers: only its number exists.
    struct Directory: TelephonyDirectory {
        func route(number: String) -> NumberRoute? {
            number == TestPhone.number ? NumberRoute(msisdn: number, applicationID: nil, trunk: nil) : nil
        }
        func deviceHA1(realm: String, username: String) -> String? { nil }
    }
}

/// Plays frames into a leg every 20 ms, then echoes what the leg hears. Confined to the leg's loop.
private final class PromptThenEcho: @unchecked Sendable {
    let leg: RTPLeg
    let prompt: [AudioFrame]
    var index = 0
    var timer: TimerHandle?

    init(leg: RTPLeg, prompt: [AudioFrame]) {
        self.leg = leg
        self.prompt = prompt
    }

    func start() {
        guard !prompt.isEmpty else { return echo() }
        tick()
    }

    private func tick() {
        guard index < prompt.count else { return echo() }
        prompt[index].withSamples { leg.send($0) }
        index += 1
        timer = leg.loop.schedule(after: .milliseconds(20)) { [weak self] in self?.tick() }
    }

    private func echo() {
        leg.onAudio = { [unowned leg] samples in leg.send(samples) }
    }

    func stop() {
        leg.loop.cancel(timer)
        leg.onAudio = nil
        leg.close()
    }
}
