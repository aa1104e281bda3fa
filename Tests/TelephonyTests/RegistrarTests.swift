import Crypto
import Runtime
import Testing
import Wire
@testable import Telephony

@Suite("Registrar")
struct RegistrarTests {
    static let realm = "app-1"
    static let ha1 = DigestAlgorithm.md5.hex("alice:\(realm):pa55")

    static func register(contact: String = "<sip:alice@127.0.0.1:5090>", expires: String? = "600", auth: String? = nil,
                         cseq: UInt32 = 1, user: String = "alice") -> SIPMessage {
        var h = SIPHeaders()
        h.add("Via", "SIP/2.0/UDP 127.0.0.1:5090;branch=z9hG4bK-r\(cseq)")
        h.add("From", "<sip:\(user)@\(realm)>;tag=r1")
        h.add("To", "<sip:\(user)@\(realm)>")
        h.add("Call-ID", "reg-1")
        h.add("CSeq", "\(cseq) REGISTER")
        h.add("Contact", contact)
        if let expires { h.add("Expires", expires) }
        if let auth { h.add("Authorization", auth) }
        return .request(.register, SIPURI(host: realm), headers: h)
    }

    static func authorize(_ decision: RegistrarDecision, password: String = "pa55", user: String = "alice") throws -> String {
        let header = try #require(decision.headers.first { $0.name == "WWW-Authenticate" }?.value)
        let challenge = try DigestChallenge.parse(header)
        return try DigestCredentials.answer(challenge, username: user, password: password, method: .register,
                                            uri: "sip:\(realm)", cnonce: "c0ffee").description
    }

    var registrar = Registrar(secret: Array("registrar-secret".utf8))
    let peer = SIPPeer(host: "127.0.0.7", port: 5090)
    func lookup(_ realm: String, _ user: String) -> String? { realm == Self.realm && user == "alice" ? Self.ha1 : nil }

    @Test("401 with an MD5 challenge, then 200 with the binding and its expiry; lookup finds the contact")
    mutating func registers() throws {
        let first = registrar.register(Self.register(), from: peer, now: Fixture.at(0), ha1: lookup)
        #expect(first.status == 401)
        let auth = try Self.authorize(first)
        let ok = registrar.register(Self.register(auth: auth, cseq: 2), from: peer, now: Fixture.at(10), ha1: lookup)
        #expect(ok.status == 200)
        #expect(ok.headers.contains { $0.name == "Contact" && $0.value.contains("expires=600") })
        let bindings = registrar.lookup("alice@APP-1", now: Fixture.at(20))
        #expect(bindings.map(\.contact.port) == [5090])
        #expect(bindings.first?.source == peer)
        #expect(registrar.isRegistered(host: "127.0.0.7", now: Fixture.at(20)))
        // Expired after 600 s.
        #expect(registrar.lookup("alice@app-1", now: Fixture.at(611_000)).isEmpty)
        #expect(!registrar.isRegistered(host: "127.0.0.7", now: Fixture.at(611_000)))
    }

    @Test("an accepted REGISTER names its address of record (to be stored); restored bindings count, expired and duplicate ones do not")
    mutating func restore() throws {
        let first = registrar.register(Self.register(), from: peer, now: Fixture.at(0), ha1: lookup)
        let ok = registrar.register(Self.register(auth: try Self.authorize(first), cseq: 2), from: peer, now: Fixture.at(10), ha1: lookup)
        #expect(ok.aor == "alice@app-1" && first.aor == nil)
        let kept = registrar.lookup("alice@app-1", now: Fixture.at(20))
        var restarted = Registrar(secret: Array("another-secret".utf8))
        var expired = kept[0]
        expired.contact = SIPURI(user: "alice", host: "127.0.0.1", port: 5091)
        expired.expires = Fixture.at(5)
        restarted.restore(kept + kept + [expired], now: Fixture.at(20))
        #expect(restarted.bindingCount == 1)
        #expect(restarted.lookup("alice@app-1", now: Fixture.at(20)) == kept)
    }

    @Test("a stored binding comes back on this process's clock with the time it had left")
    func savedRoundTrip() throws {
        let binding = Binding(aor: "alice@app-1", contact: SIPURI(user: "alice", host: "127.0.0.1", port: 5090), source: peer,
                              expires: Instant.now().adding(.seconds(600)), callID: "reg-1", sequence: 7)
        let saved = SIPEdge.saved(binding)
        #expect(saved.contact == "sip:alice@127.0.0.1:5090" && saved.transport == "UDP")
        let back = try #require(SIPEdge.binding(saved))
        #expect(back.contact == binding.contact && back.source == peer && back.sequence == 7)
        let drift = Int64(back.expires.nanoseconds) - Int64(binding.expires.nanoseconds)
        #expect(abs(drift) < 2_000_000_000)
        var old = saved
        old.expiresAtMillis = SIPEdge.wallMillis() - 1
        #expect(SIPEdge.binding(old) == nil, "an expired binding is not restored")
    }

    @Test("a wrong password is challenged again, never bound")
    mutating func wrongPassword() throws {
        let first = registrar.register(Self.register(), from: peer, now: Fixture.at(0), ha1: lookup)
        let auth = try Self.authorize(first, password: "guess")
        #expect(registrar.register(Self.register(auth: auth, cseq: 2), from: peer, now: Fixture.at(1), ha1: lookup).status == 401)
        #expect(registrar.bindingCount == 0)
    }

    @Test("too-short expiry is 423 with Min-Expires; Expires 0 removes the binding")
    mutating func expiry() throws {
        let auth = try Self.authorize(registrar.register(Self.register(), from: peer, now: Fixture.at(0), ha1: lookup))
        let short = registrar.register(Self.register(expires: "5", auth: auth, cseq: 2), from: peer, now: Fixture.at(1), ha1: lookup)
        #expect(short.status == 423 && short.headers.contains { $0.name == "Min-Expires" && $0.value == "60" })
        #expect(registrar.register(Self.register(auth: auth, cseq: 3), from: peer, now: Fixture.at(2), ha1: lookup).status == 200)
        #expect(registrar.bindingCount == 1)
        #expect(registrar.register(Self.register(expires: "0", auth: auth, cseq: 4), from: peer, now: Fixture.at(3), ha1: lookup).status == 200)
        #expect(registrar.bindingCount == 0)
    }

    @Test("a user cannot register someone else's address")
    mutating func foreignAddress() throws {
        // bob's address, alice's credentials.
        let first = registrar.register(Self.register(user: "bob"), from: peer, now: Fixture.at(0), ha1: lookup)
        let auth = try Self.authorize(first)
        let decision = registrar.register(Self.register(auth: auth, cseq: 2, user: "bob"), from: peer, now: Fixture.at(1), ha1: lookup)
        #expect(decision.status == 403)
    }

    @Test("bindings per address are capped")
    mutating func capped() throws {
        registrar.maxBindingsPerAOR = 2
        let auth = try Self.authorize(registrar.register(Self.register(), from: peer, now: Fixture.at(0), ha1: lookup))
        var statuses: [Int] = []
        for i in 0..<3 {
            statuses.append(registrar.register(Self.register(contact: "<sip:alice@127.0.0.1:\(6000 + i)>", auth: auth, cseq: UInt32(2 + i)),
                                               from: peer, now: Fixture.at(1), ha1: lookup).status)
        }
        #expect(statuses == [200, 200, 503])
    }

    @Test(arguments: [("10.1.2.3", "10.0.0.0/8", true), ("11.1.2.3", "10.0.0.0/8", false), ("127.0.0.1", "127.0.0.1", true),
                      ("127.0.0.2", "127.0.0.1/32", false), ("::1", "::/0", true), ("192.168.1.200", "192.168.1.128/25", true),
                      ("192.168.1.100", "192.168.1.128/25", false), ("127.0.0.1", "::1/128", false)])
    func addressRanges(host: String, range: String, inside: Bool) throws {
        #expect(try #require(AddressRange(parsing: range)).contains(host) == inside)
    }

    @Test("bad ranges do not parse", arguments: ["10.0.0.0/33", "nonsense", "10.0.0.0/-1", "::/129", ""])
    func badRanges(text: String) {
        #expect(AddressRange(parsing: text) == nil)
    }
}

@Suite("Trunks in the core")
struct TrunkCoreTests {
    static func core(_ trunk: TrunkConfig) -> UserAgentCore {
        UserAgentCore(config: UserAgentConfig(host: "127.0.0.1", port: 5060, trunks: [trunk]))
    }

    @Test("OPTIONS health: answered → up, then no answer within 64*T1 → down")
    func health() throws {
        let trunk = TrunkConfig(name: "carrier", host: "127.0.0.1", port: 5080, healthInterval: 30)
        let core = Self.core(trunk)
        let options = try #require(UserAgentCoreTests.sent(core.tick(now: Fixture.at(0))).first)
        #expect(options.method == .options)
        let out = core.receive(Fixture.response(200, to: options).serialize(), from: trunk.peer, now: Fixture.at(5))
        #expect(out.contains(.trunk(TrunkStatus(name: "carrier", up: true))))
        // The next check is due 30 s later; nobody answers it.
        let second = UserAgentCoreTests.sent(core.tick(now: Fixture.at(30_005)))
        #expect(second.first?.method == .options)
        var down: [UserAgentOutput] = []
        var t: UInt64 = 30_005
        while t < 70_000 { t += 500; down += core.tick(now: Fixture.at(t)) }
        #expect(down.contains(.trunk(TrunkStatus(name: "carrier", up: false))))
        #expect(core.trunkStatuses.first?.up == false)
    }

    @Test("trunks from other sources are not allowed: their INVITE is 403, a CIDR allow-list admits them")
    func allowList() throws {
        let trunk = TrunkConfig(name: "carrier", host: "10.9.9.9", allowedSources: ["127.0.0.0/8"], healthInterval: 0)
        let inv = UserAgentCoreTests.invite()
        let allowed = Self.core(trunk).receive(inv.serialize(), from: SIPPeer(host: "127.0.0.3", port: 5071), now: Fixture.at(0))
        #expect(UserAgentCoreTests.callID(allowed) != nil)
        let other = TrunkConfig(name: "carrier", host: "10.9.9.9", healthInterval: 0)
        let refused = Self.core(other).receive(inv.serialize(), from: SIPPeer(host: "127.0.0.3", port: 5071), now: Fixture.at(0))
        #expect(UserAgentCoreTests.sent(refused).map(\.status) == [403])
    }

    @Test("registration: REGISTER, 401, digest retry with a higher CSeq, 200 → registered, refreshed at half the expiry")
    func registration() throws {
        let trunk = TrunkConfig(name: "carrier", host: "127.0.0.1", port: 5080, credentials: .init(username: "acct", password: "pw"),
                                register: true, healthInterval: 0)
        let core = Self.core(trunk)
        let register = try #require(UserAgentCoreTests.sent(core.tick(now: Fixture.at(0))).first)
        #expect(register.method == .register && register.headers["Expires"] == "300")
        var challenge = Fixture.response(401, to: register)
        challenge.headers.add("WWW-Authenticate", DigestChallenge(realm: "carrier", nonce: "n1").description)
        let retry = try #require(UserAgentCoreTests.sent(core.receive(challenge.serialize(), from: trunk.peer, now: Fixture.at(10))).first)
        let credentials = try DigestCredentials.parse(try #require(retry.headers["Authorization"]))
        #expect(credentials.username == "acct")
        #expect(credentials.response == DigestCredentials.compute(algorithm: .md5, username: "acct", realm: "carrier", password: "pw",
                                                                  method: "REGISTER", uri: credentials.uri, nonce: "n1",
                                                                  nc: credentials.nonceCount, cnonce: credentials.cnonce, qop: credentials.qop))
        #expect(try retry.cseq().sequence > (try register.cseq().sequence))
        #expect(retry.callID == register.callID)
        var ok = Fixture.response(200, to: retry)
        ok.headers.set("Contact", "<sip:switchboard@127.0.0.1:5060>;expires=120")
        let out = core.receive(ok.serialize(), from: trunk.peer, now: Fixture.at(20))
        #expect(out.contains(.trunk(TrunkStatus(name: "carrier", up: true, registration: .registered(expiresIn: 120)))))
        #expect(UserAgentCoreTests.sent(core.tick(now: Fixture.at(50_000))).isEmpty)
        let refresh = try #require(UserAgentCoreTests.sent(core.tick(now: Fixture.at(60_021))).first)
        #expect(refresh.method == .register && refresh.callID == register.callID)
    }
}
