import Foundation
import Testing
import Wire
@testable import Platform

@Suite("ICE servers")
struct ICEServersTests {
    @Test("STUN and TURN URIs as RFC 7064 and 7065 write them; anything else, or TURN without a secret, is a clear error")
    func parsing() throws {
        let servers = try ICEServers(parsing: " stun:stun.example.org , turn:[2001:db8::1]:3478?transport=tcp,turns:turn.example.org:5349,stun:10.0.0.1:3478",
                                     secret: "s")
        #expect(servers.stun == ["stun:stun.example.org", "stun:10.0.0.1:3478"])
        #expect(servers.turn == ["turn:[2001:db8::1]:3478?transport=tcp", "turns:turn.example.org:5349"])
        #expect(try ICEServers(parsing: "", secret: nil) == .none)
        for bad in ["stun.example.org", "http://turn.example.org", "stun:", "stun:host:0", "stun:host:99999", "stun:host?transport=udp",
                    "turn:host?transport=sctp", "turn:user@host", "turn:[2001:db8::1", "turn:host/path"] {
            #expect(throws: ICEServerError.self, "\(bad)") { try ICEServers(parsing: bad, secret: "s") }
        }
        #expect(throws: ICEServerError.self) { try ICEServers(parsing: "turn:turn.example.org", secret: nil) }
        #expect(throws: ICEServerError.self) { try ICEServers(parsing: "turn:turn.example.org", secret: "") }
    }

    @Test("a client's TURN credential is the TURN REST API's: <expiry>:<name> and base64(HMAC-SHA1(secret, username))")
    func credentials() throws {
        let servers = try ICEServers(parsing: "stun:s.example.org,turn:t.example.org", secret: "north")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let json = servers.forClient("conn-1", now: now)
        #expect(json[0] == ["urls": ["stun:s.example.org"]])
        #expect(json[1]?["urls"] == ["turn:t.example.org"])
        #expect(json[1]?["username"] == "1800086400:conn-1")
        // python3 -c 'import hmac,hashlib,base64;print(base64.b64encode(hmac.new(b"north",b"1800086400:conn-1",hashlib.sha1).digest()).decode())'
        #expect(json[1]?["credential"] == "Ie9/VmLhQ0OjLDY49A+XDnD2CX0=")
        #expect(ICEServers.none.forClient("c") == [])
    }
}
