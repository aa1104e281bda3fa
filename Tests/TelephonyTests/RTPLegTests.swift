import Audio
import Crypto
import Foundation
import Runtime
import SRTPReference
import Synchronization
import Testing
import Wire
@testable import Telephony

/// Two legs on one loop, or a leg against SIPp's RTP echo, on loopback.
@Suite("RTP legs", .serialized)
struct RTPLegTests {
    /// What a leg heard: frames, the tone power at the probe frequencies, digits.
    final class Heard: Sendable {
        let frames = Mutex(0)
        let power = Mutex<(target: Double, other: Double)>((0, 0))
        let digits = Mutex("")
    }

    static func negotiated(_ codec: AudioCodec, port: UInt16, pt: UInt8? = nil) -> NegotiatedAudio {
        NegotiatedAudio(remoteAddress: "127.0.0.1", remotePort: port, codec: codec, payloadType: pt ?? codec.defaultPayloadType,
                        telephoneEventPayloadType: 101, ptime: 20, direction: .sendrecv)
    }

    /// A 20 ms frame of a sine at `frequency`, continuing phase from frame `index`.
    static func tone(_ frequency: Double, rate: Int, index: Int) -> [Int16] {
        let n = rate / 50
        return (0..<n).map { i in
            let t = Double(index * n + i) / Double(rate)
            return Int16(9000 * sin(2 * Double.pi * frequency * t))
        }
    }

    static func listen(_ leg: RTPLeg, heard: Heard, frequency: Double, other: Double) {
        let rate = leg.sampleRate
        let target = Goertzel(frequency: frequency, sampleRate: rate)
        let off = Goertzel(frequency: other, sampleRate: rate)
        leg.onAudio = { samples in
            let p = (target.power(samples), off.power(samples))
            heard.frames.withLock { $0 += 1 }
            heard.power.withLock { $0.target += p.0; $0.other += p.1 }
        }
        leg.onDigit = { d in heard.digits.withLock { $0.append(d) } }
    }

    /// 25 frames of 1 kHz from `a`, 10 ms apart, then a report; returns once they had time to arrive.
    static func sendToneAndReport(from a: RTPLeg, on loop: EventLoop) async throws {
        for i in 0..<25 {
            try await loop.submit { Self.tone(1000, rate: a.sampleRate, index: i).withUnsafeBufferPointer { a.send($0) } }
            try await Task.sleep(for: .milliseconds(10))
        }
        try await loop.submit { a.sendReport() }
        try await Task.sleep(for: .milliseconds(300))
    }

    @Test("a tone crosses between two legs and is decoded at its frequency", arguments: [AudioCodec.pcmu, .pcma, .opus])
    func toneBetweenLegs(codec: AudioCodec) async throws {
        let loop = EventLoop()
        loop.startThread(name: "rtp-test")
        defer { loop.stop() }
        let pool = RTPPortPool(range: 41_000...41_999)
        let heard = Heard()
        let (a, b) = try await loop.submit { () throws -> (RTPLeg, RTPLeg) in
            // Each learns the other's port after binding, as SDP would tell it.
            let a = try RTPLeg(loop: loop, pool: pool, host: "127.0.0.1", negotiated: Self.negotiated(codec, port: 9))
            let b = try RTPLeg(loop: loop, pool: pool, host: "127.0.0.1", negotiated: Self.negotiated(codec, port: a.port))
            a.update(Self.negotiated(codec, port: b.port))
            Self.listen(b, heard: heard, frequency: 1000, other: 440)
            return (a, b)
        }
        for i in 0..<50 {
            try await loop.submit { Self.tone(1000, rate: a.sampleRate, index: i).withUnsafeBufferPointer { a.send($0) } }
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .milliseconds(300))
        let frames = heard.frames.withLock { $0 }
        let power = heard.power.withLock { $0 }
        #expect(frames >= 40, "only \(frames) of 50 frames decoded")
        #expect(power.target > 20 * power.other, "1 kHz \(power.target) vs 440 Hz \(power.other)")
        let stats = try await loop.submit { (a.statistics, b.statistics) }
        #expect(stats.0.packetsSent == 50 && stats.1.packetsDropped == 0)
        try await loop.submit { a.close(); b.close() }
        #expect(pool.inUse == 0)
    }

    final class Watch: @unchecked Sendable { weak var owner: AnyObject? }

    @Test("a closed leg drops its handlers, and with them what they captured")
    func closeLetsGo() async throws {
        final class Owner: Sendable {}
        let loop = EventLoop()
        loop.startThread(name: "rtp-test")
        defer { loop.stop() }
        let pool = RTPPortPool(range: 41_000...41_999)
        let watch = Watch()
        let leg = try await loop.submit { () throws -> RTPLeg in
            let leg = try RTPLeg(loop: loop, pool: pool, host: "127.0.0.1", negotiated: Self.negotiated(.pcmu, port: 9))
            let owner = Owner()
            watch.owner = owner
            leg.onAudio = { _ in _ = owner }
            leg.onDigit = { _ in _ = owner }
            leg.onDTLSFailure = { _ in _ = owner }
            return leg
        }
        #expect(watch.owner != nil)
        try await loop.submit { leg.close() }
        #expect(watch.owner == nil, "a closed leg still holds what its handlers captured")
    }

    @Test("SDES-keyed legs: the tone crosses as SRTP; a leg with the wrong key decodes nothing and counts the failures")
    func srtp() async throws {
        let loop = EventLoop()
        loop.startThread(name: "rtp-test")
        defer { loop.stop() }
        let pool = RTPPortPool(range: 41_000...41_999)
        let (keyA, keyB) = (Array(repeating: UInt8(1), count: 30), Array(repeating: UInt8(2), count: 30))
        @Sendable func keyed(_ port: UInt16, local: [UInt8], remote: [UInt8]) -> NegotiatedAudio {
            var n = Self.negotiated(.pcmu, port: port)
            n.srtp = SDESKeying(profile: .aes128CMSHA1_80, local: local, remote: remote)
            return n
        }
        for wrongKey in [false, true] {
            let heard = Heard()
            let (a, b) = try await loop.submit { () throws -> (RTPLeg, RTPLeg) in
                let a = try RTPLeg(loop: loop, pool: pool, host: "127.0.0.1", negotiated: keyed(9, local: keyA, remote: keyB))
                let b = try RTPLeg(loop: loop, pool: pool, host: "127.0.0.1",
                                   negotiated: keyed(a.port, local: keyB, remote: wrongKey ? keyB : keyA))
                a.update(keyed(b.port, local: keyA, remote: keyB))
                Self.listen(b, heard: heard, frequency: 1000, other: 440)
                return (a, b)
            }
            try await Self.sendToneAndReport(from: a, on: loop)
            let frames = heard.frames.withLock { $0 }
            let stats = try await loop.submit { b.statistics }
            if wrongKey {
                #expect(frames == 0 && stats.srtpFailures == 26 && stats.rtcpReceived == 0, "\(frames) frames, \(stats)")
            } else {
                let power = heard.power.withLock { $0 }
                #expect(frames >= 20 && power.target > 20 * power.other && stats.srtpFailures == 0 && stats.rtcpReceived == 1,
                        "\(frames) frames, \(stats)")
            }
            try await loop.submit { a.close(); b.close() }
        }
        #expect(pool.inUse == 0)
    }

    @Test("DTLS-keyed legs: both ports' handshakes key them (one with RTCP multiplexed) and the tone crosses; a certificate not matching its fingerprint keys nothing and nothing leaves in the clear")
    func dtlsSRTP() async throws {
        let loop = EventLoop()
        loop.startThread(name: "rtp-test")
        defer { loop.stop() }
        let pool = RTPPortPool(range: 41_000...41_999)
        let ours = SDPFingerprint(algorithm: "sha-256", value: try #require(DTLSKeying.certificate).fingerprintSHA256)
        let bogus = SDPFingerprint(algorithm: "sha-256", value: String(repeating: "AB:", count: 31) + "CD")
        for (wrongFingerprint, mux) in [(false, false), (true, false), (false, true)] {
            @Sendable func keyed(_ port: UInt16, role: DTLSEngine.Role, expecting: SDPFingerprint) -> NegotiatedAudio {
                var n = Self.negotiated(.pcmu, port: port)
                n.dtls = DTLSKeying(role: role, remote: expecting)
                n.rtcpMux = mux
                return n
            }
            let handshakes = mux ? 1 : 2
            let heard = Heard()
            let failures = Mutex<[DTLSFailure]>([])
            let (a, b) = try await loop.submit { () throws -> (RTPLeg, RTPLeg) in
                // b waits for the handshakes (passive); a, told b's ports, starts them (active).
                let b = try RTPLeg(loop: loop, pool: pool, host: "127.0.0.1", negotiated: keyed(9, role: .server, expecting: wrongFingerprint ? bogus : ours))
                let a = try RTPLeg(loop: loop, pool: pool, host: "127.0.0.1", negotiated: keyed(b.port, role: .client, expecting: ours))
                b.update(keyed(a.port, role: .server, expecting: wrongFingerprint ? bogus : ours))
                Self.listen(b, heard: heard, frequency: 1000, other: 440)
                b.onDTLSFailure = { failure in failures.withLock { $0.append(failure) } }
                return (a, b)
            }
            // Up to 5 s of looks for the handshakes to finish (or fail).
            var settled = false
            for _ in 0..<250 where !settled {
                let (x, y) = try await loop.submit { (a.statistics, b.statistics) }
                settled = wrongFingerprint ? y.dtlsFailures >= 1 : x.dtlsHandshakes == handshakes && y.dtlsHandshakes == handshakes
                if !settled { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(settled)
            try await Self.sendToneAndReport(from: a, on: loop)
            let frames = heard.frames.withLock { $0 }
            let (sent, received) = try await loop.submit { (a.statistics, b.statistics) }
            if wrongFingerprint {
                #expect(frames == 0 && sent.packetsSent == 0 && sent.rtcpSent == 0 && received.dtlsHandshakes == 0, "\(frames) frames, \(sent), \(received)")
                #expect(failures.withLock { $0 } == [.fingerprintMismatch, .fingerprintMismatch], "each port's handshake reported once")
            } else {
                let power = heard.power.withLock { $0 }
                #expect(frames >= 20 && power.target > 20 * power.other && received.srtpFailures == 0 && received.rtcpReceived == 1,
                        "\(frames) frames, \(received)")
                #expect(failures.withLock { $0 }.isEmpty)
            }
            try await loop.submit { a.close(); b.close() }
        }
        #expect(pool.inUse == 0)
    }

    @Test("a re-offer with a new fingerprint is a new DTLS association (RFC 5763 §5): new handshakes, each side's role as it was, the tone crossing on the new keys; the same fingerprint again keeps the keys")
    func dtlsNewAssociation() async throws {
        let loop = EventLoop()
        loop.startThread(name: "rtp-test")
        defer { loop.stop() }
        let pool = RTPPortPool(range: 45_000...45_099)
        let certificate = try #require(DTLSKeying.certificate)
        let sha256 = SDPFingerprint(algorithm: "sha-256", value: certificate.fingerprintSHA256)
        // The same certificate named by another hash: a new fingerprint that still matches.
        let sha1 = SDPFingerprint(algorithm: "sha-1", value: try #require(DTLSCertificate.fingerprint(ofDER: certificate.der, algorithm: "sha-1")))
        @Sendable func keyed(_ port: UInt16, role: DTLSEngine.Role, expecting: SDPFingerprint) -> NegotiatedAudio {
            var n = Self.negotiated(.pcmu, port: port)
            n.dtls = DTLSKeying(role: role, remote: expecting)
            return n
        }
        let heard = Heard()
        let failures = Mutex<[DTLSFailure]>([])
        let (a, b) = try await loop.submit { () throws -> (RTPLeg, RTPLeg) in
            let b = try RTPLeg(loop: loop, pool: pool, host: "127.0.0.1", negotiated: keyed(9, role: .server, expecting: sha256))
            let a = try RTPLeg(loop: loop, pool: pool, host: "127.0.0.1", negotiated: keyed(b.port, role: .client, expecting: sha256))
            b.update(keyed(a.port, role: .server, expecting: sha256))
            Self.listen(b, heard: heard, frequency: 1000, other: 440)
            for leg in [a, b] { leg.onDTLSFailure = { failure in failures.withLock { $0.append(failure) } } }
            return (a, b)
        }
        func handshakes(_ count: Int) async throws -> Bool {
            for _ in 0..<250 {
                let (x, y) = try await loop.submit { (a.statistics.dtlsHandshakes, b.statistics.dtlsHandshakes) }
                if x == count && y == count { return true }
                try await Task.sleep(for: .milliseconds(20))
            }
            return false
        }
        #expect(try await handshakes(2))
        // A hold, say: the same fingerprint (and a role that would be the other, which a re-offer cannot change).
        try await loop.submit {
            a.update(keyed(b.port, role: .server, expecting: sha256))
            b.update(keyed(a.port, role: .client, expecting: sha256))
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await loop.submit { (a.statistics.dtlsHandshakes, b.statistics.dtlsHandshakes) } == (2, 2))
        // A new fingerprint, a's update first: its ClientHellos reach b's keyed ports before b's update, which keeps them
        // for its new handshakes (rather than wait out a's resend).
        try await loop.submit { a.update(keyed(b.port, role: .server, expecting: sha1)) }
        try await Task.sleep(for: .milliseconds(100))
        try await loop.submit { b.update(keyed(a.port, role: .client, expecting: sha1)) }
        #expect(try await handshakes(4))
        #expect(try await loop.submit { (a.negotiated.dtls?.role, b.negotiated.dtls?.role) } == (.client, .server))
        try await Self.sendToneAndReport(from: a, on: loop)
        let power = heard.power.withLock { $0 }
        let received = try await loop.submit { b.statistics }
        #expect(heard.frames.withLock { $0 } >= 20 && power.target > 20 * power.other && received.srtpFailures == 0, "\(received)")
        #expect(failures.withLock { $0 }.isEmpty)
        try await loop.submit { a.close(); b.close() }
        #expect(pool.inUse == 0)
    }

    @Test("a peer whose SDES key has an MKI (RFC 4568 §6.1): its packets, protected by libsrtp with the MKI, are heard; packets with another MKI fail SRTP")
    func sdesMKI() async throws {
        let loop = EventLoop()
        loop.startThread(name: "rtp-test")
        defer { loop.stop() }
        let pool = RTPPortPool(range: 48_000...48_099)
        let theirKey = (0..<30).map { UInt8($0 &* 5 &+ 3) }
        let mki: [UInt8] = [0, 0, 0, 1]
        let peer = try #require(IPEndpoint.boundSocket(type: Int32(SOCK_DGRAM.rawValue), host: "127.0.0.1", port: 0, flags: 0))
        defer { close(peer.fd) }
        let heard = Heard()
        let leg = try await loop.submit { () throws -> RTPLeg in
            var n = Self.negotiated(.pcmu, port: peer.port)
            n.srtp = SDESKeying(profile: .aes128CMSHA1_80, local: Array(repeating: 7, count: 30), remote: theirKey, remoteMKI: mki)
            let leg = try RTPLeg(loop: loop, pool: pool, host: "127.0.0.1", negotiated: n)
            Self.listen(leg, heard: heard, frequency: 1000, other: 440)
            return leg
        }
        let to = try #require(IPEndpoint(host: "127.0.0.1", port: leg.port))
        func send(_ session: SRTPSession, ssrc: UInt32, count: Int) throws {
            for i in 0..<count {
                let ts = UInt32(i * 160)
                var packet: [UInt8] = [0x80, 0, UInt8(i >> 8), UInt8(i & 0xFF), UInt8(ts >> 24), UInt8((ts >> 16) & 0xFF), UInt8((ts >> 8) & 0xFF),
                                       UInt8(ts & 0xFF), UInt8(ssrc >> 24), UInt8((ssrc >> 16) & 0xFF), UInt8((ssrc >> 8) & 0xFF), UInt8(ssrc & 0xFF)]
                packet += Self.tone(1000, rate: 8000, index: i).map(MuLaw.encode)
                try session.protectRTP(&packet)
                _ = packet.withUnsafeBytes { bytes in to.withSockAddr { sendto(peer.fd, bytes.baseAddress, bytes.count, 0, $0, $1) } }
                usleep(10_000)
            }
        }
        let k = SRTPProfile.aes128CMSHA1_80.keyLength
        try send(SRTPSession(profile: .aes128CMSHA1_80, key: Array(theirKey[..<k]), salt: Array(theirKey[k...]), direction: .outbound, mki: mki),
                 ssrc: 0x1111_1111, count: 25)
        try send(SRTPSession(profile: .aes128CMSHA1_80, key: Array(theirKey[..<k]), salt: Array(theirKey[k...]), direction: .outbound, mki: [0, 0, 0, 2]),
                 ssrc: 0x2222_2222, count: 5)
        try await Task.sleep(for: .milliseconds(300))
        let power = heard.power.withLock { $0 }
        let statistics = try await loop.submit { leg.statistics }
        #expect(heard.frames.withLock { $0 } >= 20 && power.target > 20 * power.other, "\(statistics)")
        #expect(statistics.srtpFailures == 5)
        try await loop.submit { leg.close() }
    }

    @Test("RFC 4733 digits both ways: each reported once despite the three end packets; p pauses")
    func digits() async throws {
        let loop = EventLoop()
        loop.startThread(name: "rtp-test")
        defer { loop.stop() }
        let pool = RTPPortPool(range: 42_000...42_099)
        let heardA = Heard(), heardB = Heard()
        let (a, b) = try await loop.submit { () throws -> (RTPLeg, RTPLeg) in
            let a = try RTPLeg(loop: loop, pool: pool, host: "127.0.0.1", negotiated: Self.negotiated(.pcmu, port: 9))
            let b = try RTPLeg(loop: loop, pool: pool, host: "127.0.0.1", negotiated: Self.negotiated(.pcmu, port: a.port))
            a.update(Self.negotiated(.pcmu, port: b.port))
            Self.listen(a, heard: heardA, frequency: 1000, other: 440)
            Self.listen(b, heard: heardB, frequency: 1000, other: 440)
            for d in "1P2#" { a.sendDigit(d) }
            b.sendDigit("*")
            return (a, b)
        }
        // `p` holds the next digit back 500 ms (after the first's 100 ms and the 60 ms gap).
        try await Task.sleep(for: .milliseconds(400))
        #expect(!heardB.digits.withLock { $0 }.contains("2"))
        try await Task.sleep(for: .seconds(2))
        #expect(heardB.digits.withLock { $0 } == "12#")
        #expect(heardA.digits.withLock { $0 } == "*")
        try await loop.submit { a.close(); b.close() }
    }

    @Test("symmetric RTP: the leg answers where packets come from, not the SDP address")
    func latching() async throws {
        let loop = EventLoop()
        loop.startThread(name: "rtp-test")
        defer { loop.stop() }
        let pool = RTPPortPool(range: 43_000...43_099)
        let heard = Heard()
        let (a, b) = try await loop.submit { () throws -> (RTPLeg, RTPLeg) in
            // a's SDP points at a port nobody uses; b sends to a; a must reply to b.
            let a = try RTPLeg(loop: loop, pool: pool, host: "127.0.0.1", negotiated: Self.negotiated(.pcmu, port: 9))
            let b = try RTPLeg(loop: loop, pool: pool, host: "127.0.0.1", negotiated: Self.negotiated(.pcmu, port: a.port))
            Self.listen(b, heard: heard, frequency: 1000, other: 440)
            return (a, b)
        }
        for i in 0..<20 {
            try await loop.submit {
                Self.tone(300, rate: 8000, index: i).withUnsafeBufferPointer { b.send($0) }
                Self.tone(1000, rate: 8000, index: i).withUnsafeBufferPointer { a.send($0) }
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(heard.frames.withLock { $0 } >= 15)
        #expect(try await loop.submit { a.statistics.latches } == 1)
        try await loop.submit { a.close(); b.close() }
    }

    @Test("RTCP: a sender report reaches the peer leg")
    func rtcp() async throws {
        let loop = EventLoop()
        loop.startThread(name: "rtp-test")
        defer { loop.stop() }
        let pool = RTPPortPool(range: 44_000...44_099)
        let (a, b) = try await loop.submit { () throws -> (RTPLeg, RTPLeg) in
            let a = try RTPLeg(loop: loop, pool: pool, host: "127.0.0.1", negotiated: Self.negotiated(.pcma, port: 9))
            let b = try RTPLeg(loop: loop, pool: pool, host: "127.0.0.1", negotiated: Self.negotiated(.pcma, port: a.port))
            a.update(Self.negotiated(.pcma, port: b.port))
            Self.tone(500, rate: 8000, index: 0).withUnsafeBufferPointer { a.send($0) }
            a.sendReport()
            return (a, b)
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await loop.submit { b.statistics.rtcpReceived } == 1)
        try await loop.submit { a.close(); b.close() }
    }

    @Test("a tone sent to SIPp's RTP echo comes back and is decoded at its frequency")
    func sippEcho() async throws {
        let sipPort = try freePort()
        let mediaPort = UInt16(45_000)
        async let sipp = runSIPp(["-sn", "uas", "-i", "127.0.0.1", "-p", String(sipPort), "-mi", "127.0.0.1", "-mp", String(mediaPort),
                                  "-rtp_echo", "-m", "1"], timeout: .seconds(8))
        try await Task.sleep(for: .milliseconds(700))
        let loop = EventLoop()
        loop.startThread(name: "rtp-test")
        let pool = RTPPortPool(range: 46_000...46_099)
        let heard = Heard()
        let leg = try await loop.submit { () throws -> RTPLeg in
            let leg = try RTPLeg(loop: loop, pool: pool, host: "127.0.0.1", negotiated: Self.negotiated(.pcmu, port: mediaPort))
            Self.listen(leg, heard: heard, frequency: 700, other: 1400)
            return leg
        }
        for i in 0..<50 {
            try await loop.submit { Self.tone(700, rate: 8000, index: i).withUnsafeBufferPointer { leg.send($0) } }
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .milliseconds(300))
        let frames = heard.frames.withLock { $0 }
        let power = heard.power.withLock { $0 }
        try await loop.submit { leg.close() }
        loop.stop()
        // SIPp waits for a call that never comes; stop it.
        _ = try? await sipp
        #expect(frames >= 40, "only \(frames) echoed frames decoded")
        #expect(power.target > 20 * power.other)
    }
}
