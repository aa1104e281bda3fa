import Foundation
import Testing
@testable import Wire

/// Loads a fixture's bytes from Tests/Fixtures.
func fixtureBytes(_ relativePath: String) throws -> [UInt8] {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    return Array(try Data(contentsOf: root.appendingPathComponent("Fixtures").appendingPathComponent(relativePath)))
}

/// What a parsing element does with each RFC 4475 message.
enum TortureVerdict: Sendable, CustomStringConvertible {
    /// Parses and validates.
    case valid
    /// A request rejected with this status.
    case reject(Int)
    /// A response that is dropped.
    case drop

    var description: String {
        switch self {
        case .valid: "valid"
        case .reject(let s): "reject \(s)"
        case .drop: "drop"
        }
    }
}

@Suite("SIP RFC 4475 torture messages")
struct SIPTortureTests {
    /// Every message of RFC 4475 with the outcome its discussion calls for at the parsing layer.
    /// Application-layer outcomes (415, 420, 483) are checked by the Telephony request screen.
    static let table: [(String, TortureVerdict)] = [
        // 3.1.1 valid messages
        ("wsinv", .valid), ("intmeth", .valid), ("esc01", .valid), ("escnull", .valid), ("esc02", .valid),
        ("lwsdisp", .valid), ("longreq", .valid), ("dblreq", .valid), ("semiuri", .valid), ("transports", .valid),
        ("mpart01", .valid), ("unreason", .valid), ("noreason", .valid),
        // 3.1.2 invalid messages
        ("badinv01", .reject(400)), ("clerr", .reject(400)), ("ncl", .reject(400)), ("scalar02", .reject(400)),
        ("scalarlg", .drop), ("quotbal", .reject(400)), ("ltgtruri", .reject(400)), ("lwsruri", .reject(400)),
        ("lwsstart", .reject(400)), ("trws", .reject(400)), ("escruri", .reject(400)), ("baddate", .reject(400)),
        ("regbadct", .reject(400)), ("badaspec", .reject(400)), ("baddn", .reject(400)), ("badvers", .reject(505)),
        ("mismatch01", .reject(400)), ("mismatch02", .reject(400)), ("bigcode", .drop),
        // 3.2 transaction layer semantics
        ("badbranch", .valid),
        // 3.3 application layer semantics
        ("insuf", .reject(400)), ("unkscm", .reject(416)), ("novelsc", .reject(416)), ("unksm2", .valid),
        ("bext01", .valid), ("invut", .valid), ("regaut01", .valid), ("multi01", .reject(400)), ("mcl01", .reject(400)),
        ("bcast", .valid), ("zeromf", .valid), ("cparam01", .valid), ("cparam02", .valid), ("regescrt", .valid),
        ("sdp01", .valid),
        // 3.4 backward compatibility
        ("inv2543", .valid),
    ]

    @Test("each message gets the RFC's verdict", arguments: table)
    func verdict(name: String, expected: TortureVerdict) throws {
        let bytes = try fixtureBytes("sip/rfc4475/\(name).dat")
        let isResponse = bytes.starts(with: Array("SIP/".utf8))
        do {
            let message = try SIPMessage.parse(bytes)
            try message.validate()
            guard case .valid = expected else {
                Issue.record("\(name) was accepted, expected \(expected)")
                return
            }
        } catch {
            switch expected {
            case .valid: Issue.record("\(name) rejected: \(error)")
            case .reject(let status):
                #expect(!isResponse)
                #expect(error.status == status, "\(name): \(error)")
                #expect(!error.detail.isEmpty)
            case .drop: #expect(isResponse, "\(name): \(error)")
            }
        }
    }

    @Test("the table covers every committed fixture")
    func coversFixtures() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let dir = root.appendingPathComponent("Fixtures/sip/rfc4475")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".dat") }
            .map { String($0.dropLast(4)) }
        #expect(Set(names) == Set(Self.table.map(\.0)))
        #expect(names.count == 49)
    }

    @Test("valid messages survive serialize → parse unchanged", arguments: table.filter {
        if case .valid = $0.1 { true } else { false }
    }.map(\.0))
    func roundTrip(name: String) throws {
        let message = try SIPMessage.parse(try fixtureBytes("sip/rfc4475/\(name).dat"))
        let wire = message.serialize()
        let again = try SIPMessage.parse(wire)
        #expect(again.startLine == message.startLine)
        #expect(again.body == message.body)
        #expect(again.serialize() == wire)
        try again.validate()
    }

    @Test("wsinv: folding, compact forms, escapes and odd values")
    func wsinv() throws {
        let m = try SIPMessage.parse(try fixtureBytes("sip/rfc4475/wsinv.dat"))
        #expect(m.method == .invite)
        #expect(m.requestURI?.parameters.contains("unknownparam") == true)
        #expect(try m.from().displayName == "J Rosenberg \\\"")
        #expect(try m.from().tag == "98asjd8")
        #expect(try m.to().tag == "1918181833n")
        #expect(try m.maxForwards() == 68)
        #expect(try m.cseq() == SIPCSeq(9, .invite))
        let vias = try m.vias()
        #expect(vias.count == 3)
        #expect(vias[0].transport == "UDP" && vias[0].host == "192.0.2.2" && vias[0].branch == "390skdjuw")
        #expect(m.headers["s"] == "")
        #expect(m.headers["NewFangledHeader"] == "newfangled value continued newfangled value")
        #expect(m.headers["UnknownHeaderWithUnusualValue"] == ";;,,;;,;")
        let contact = try #require(try m.contacts().first)
        #expect(contact.displayName == "Quoted string \"\"")
        #expect(contact.parameters["newparam"] == "newvalue" && contact.parameters["secondparam"] == "")
        #expect(m.body.count == 150)
    }

    @Test("escapes in URIs decode: esc01, escnull, semiuri")
    func escapes() throws {
        let esc = try SIPMessage.parse(try fixtureBytes("sip/rfc4475/esc01.dat"))
        #expect(esc.requestURI?.user == "sips:user@example.com")
        let null = try SIPMessage.parse(try fixtureBytes("sip/rfc4475/escnull.dat"))
        #expect(try null.to().uri.user == "null-\u{0}-null")
        let semi = try SIPMessage.parse(try fixtureBytes("sip/rfc4475/semiuri.dat"))
        #expect(semi.requestURI?.user == "user;par=u@example.net")
    }

    @Test("dblreq: octets after Content-Length in a datagram are ignored")
    func trailingOctets() throws {
        let m = try SIPMessage.parse(try fixtureBytes("sip/rfc4475/dblreq.dat"))
        #expect(m.method == .register && m.body.isEmpty)
    }
}
