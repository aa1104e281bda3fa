import Audio
import Foundation
import Runtime
import Synchronization
import Testing
import Wire
@testable import Telephony

/// Answers with an RTP leg that sends a 1 kHz tone and measures what it hears at 440 Hz (baresip's sine).
final class ToneAnswerer: IncomingCallHandler {
    let edge: SIPEdge
    let pool = RTPPortPool(range: 47_000...47_099)
    let frames = Mutex(0)
    let power = Mutex<(at440: Double, at1000: Double)>((0, 0))
    let leg = Mutex<RTPLeg?>(nil)
    init(edge: SIPEdge) { self.edge = edge }

    func incomingCall(_ call: IncomingCall) {
        guard let offer = call.offer,
              let (_, negotiated) = try? PlainRTPNegotiator.answer(offer, local: AudioSessionConfig(address: "127.0.0.1", port: 9),
                                                                   sessionID: 1, version: 1),
              let leg = try? RTPLeg(loop: edge.loop, pool: pool, host: "127.0.0.1", negotiated: negotiated),
              let (answer, _) = try? PlainRTPNegotiator.answer(offer, local: AudioSessionConfig(address: "127.0.0.1", port: leg.port),
                                                               sessionID: 1, version: 1) else { return call.reject(status: 488) }
        let rate = leg.sampleRate
        let a = Goertzel(frequency: 440, sampleRate: rate), b = Goertzel(frequency: 1000, sampleRate: rate)
        leg.onAudio = { [self] samples in
            frames.withLock { $0 += 1 }
            let p = (a.power(samples), b.power(samples))
            power.withLock { $0.at440 += p.0; $0.at1000 += p.1 }
        }
        self.leg.withLock { $0 = leg }
        call.answer(sdp: answer)
        var index = 0
        func tick() {
            guard self.leg.withLock({ $0 }) != nil else { return }
            RTPLegTests.tone(1000, rate: rate, index: index).withUnsafeBufferPointer { leg.send($0) }
            index += 1
            _ = edge.loop.schedule(after: .milliseconds(20)) { tick() }
        }
        tick()
    }

    func stop() async {
        _ = try? await edge.loop.submit { [self] in leg.withLock { $0?.close(); $0 = nil } }
    }
}

@Suite("baresip calls in", .serialized)
struct BaresipLiveTests {
    @Test("baresip's 440 Hz sine reaches the leg, and the leg's 1 kHz tone reaches baresip's recording", .timeLimit(.minutes(1)))
    func tones() async throws {
        let directory = TableDirectory(numbers: ["15550003": NumberRoute(msisdn: "15550003", applicationID: "app-1", trunk: nil)])
        let edge = SIPEdge(config: UserAgentConfig(host: "127.0.0.1", port: 0, devices: ["127.0.0.1"]), directory: directory)
        let port = try await edge.start()
        let answerer = ToneAnswerer(edge: edge)
        edge.setHandler(answerer)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("baresip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("log").path
        var output = ""
        // A port found free can be taken by another test before baresip binds it: baresip then stops at once with
        // "Address already in use" and the call is placed again from a new port.
        for attempt in 1...3 {
            let sipPort = try freeTCPPort(tlsNext: true)
            let wav = dir.appendingPathComponent("played.wav").path
            try "<sip:bob@127.0.0.1>;regint=0\n".write(to: dir.appendingPathComponent("accounts"), atomically: true, encoding: .utf8)
            try "".write(to: dir.appendingPathComponent("contacts"), atomically: true, encoding: .utf8)
            try """
            poll_method epoll
            sip_listen 127.0.0.1:\(sipPort)
            net_interface 127.0.0.1
            audio_player aufile,\(wav)
            audio_source ausine,440
            audio_alert aufile,/dev/null
            ausrc_srate 48000
            ausrc_channels 2
            module_path /usr/lib/baresip/modules
            module stdio.so
            module g711.so
            module ausine.so
            module aufile.so
            module sndfile.so
            snd_path \(dir.path)
            module_app account.so
            module_app menu.so

            """.write(to: dir.appendingPathComponent("config"), atomically: true, encoding: .utf8)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/baresip")
            p.arguments = ["-f", dir.path, "-e", "/dial sip:15550003@127.0.0.1:\(port)", "-t", "4"]
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            p.standardOutput = FileHandle(forWritingAtPath: log)
            p.standardError = p.standardOutput
            p.standardInput = Pipe()
            try p.run()
            let deadline = ContinuousClock.now + .seconds(15)
            while p.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
            if p.isRunning { p.terminate() }
            output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            guard output.contains("Address already in use"), attempt < 3 else { break }
        }
        await answerer.stop()
        await edge.stop()
        let frames = answerer.frames.withLock { $0 }
        let power = answerer.power.withLock { $0 }
        #expect(frames >= 50, "leg decoded \(frames) frames; baresip said:\n\(output.suffix(1500))")
        #expect(power.at440 > 20 * power.at1000, "440 Hz \(power.at440) vs 1 kHz \(power.at1000)")
        // baresip's sndfile module recorded what it decoded (dump-*-dec.wav): 16-bit PCM after a 44-byte header.
        let files = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        let decoded = try #require(files.first { $0.hasSuffix("dec.wav") }, "no recording among \(files)")
        let data = try Data(contentsOf: dir.appendingPathComponent(decoded))
        #expect(data.count > 44 + 8000)
        let samples: [Int16] = data.dropFirst(44).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let rate = Self.wavRate(data)
        let heard1000 = Goertzel(frequency: 1000, sampleRate: rate).power(samples)
        let heard440 = Goertzel(frequency: 440, sampleRate: rate).power(samples)
        #expect(heard1000 > 20 * heard440, "baresip heard 1 kHz \(heard1000) vs 440 Hz \(heard440) at \(rate) Hz")
    }

    static func wavRate(_ data: Data) -> Int {
        guard data.count >= 28 else { return 8000 }
        return Int(data[24]) | Int(data[25]) << 8 | Int(data[26]) << 16 | Int(data[27]) << 24
    }
}
