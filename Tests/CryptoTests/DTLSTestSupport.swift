@testable import Crypto

/// In-memory wiring of two engines, as a UDP path would carry their datagrams.
struct DTLSLink {
    let client: DTLSEngine
    let server: DTLSEngine
    var now: UInt64 = 1_000_000_000
    /// Every datagram either side emitted, in order, with who sent it.
    var sent: [(fromClient: Bool, datagram: [UInt8])] = []
    var applicationDataAtServer: [[UInt8]] = []
    var applicationDataAtClient: [[UInt8]] = []

    static let clientCertificate = try! DTLSCertificate(commonName: "client")
    static let serverCertificate = try! DTLSCertificate()

    init(
        clientProfiles: [SRTPProfile] = [.aeadAES128GCM, .aes128CMSHA1_80],
        serverProfiles: [SRTPProfile] = [.aeadAES128GCM, .aes128CMSHA1_80],
        clientExpects: String? = nil, serverExpects: String? = nil, mtu: Int = 1200,
        retransmission: DTLSEngine.RetransmissionPolicy = .default
    ) throws {
        client = try DTLSEngine(
            role: .client, certificate: Self.clientCertificate,
            expectedRemoteFingerprint: ("sha-256", clientExpects ?? Self.serverCertificate.fingerprintSHA256),
            srtpProfiles: clientProfiles, mtu: mtu, retransmission: retransmission)
        server = try DTLSEngine(
            role: .server, certificate: Self.serverCertificate,
            expectedRemoteFingerprint: ("sha-256", serverExpects ?? Self.clientCertificate.fingerprintSHA256),
            srtpProfiles: serverProfiles, mtu: mtu, retransmission: retransmission)
    }

    /// Starts the client and delivers datagrams until both sides fall silent.
    /// `drop` sees each datagram (sender, index among that sender's datagrams) and may lose it.
    mutating func run(drop: (Bool, Int) -> Bool = { _, _ in false }) {
        _ = server.start(now: now)
        var queue = client.start(now: now).map { (true, $0) }
        deliver(&queue, drop: drop)
    }

    /// Delivers the queue (and everything it provokes) until no datagram is in flight.
    mutating func deliver(_ queue: inout [(Bool, [UInt8])], drop: (Bool, Int) -> Bool = { _, _ in false }) {
        var rounds = 0
        var counts = [true: 0, false: 0]
        while !queue.isEmpty && rounds < 1_000 {
            rounds += 1
            let (fromClient, datagram) = queue.removeFirst()
            sent.append((fromClient, datagram))
            let index = counts[fromClient, default: 0]
            counts[fromClient] = index + 1
            if drop(fromClient, index) { continue }
            let receiver = fromClient ? server : client
            let output = receiver.receive(datagram, now: now)
            if fromClient {
                applicationDataAtServer += output.applicationData
            } else {
                applicationDataAtClient += output.applicationData
            }
            queue += output.datagrams.map { (!fromClient, $0) }
        }
    }
}

/// Splits a datagram into DTLS records; nil if it does not consist of whole records.
func dtlsRecords(in datagram: [UInt8]) -> [(type: UInt8, epoch: UInt16, length: Int)]? {
    var records: [(UInt8, UInt16, Int)] = []
    var offset = 0
    while offset < datagram.count {
        guard datagram.count - offset >= 13 else { return nil }
        let type = datagram[offset]
        let version = UInt16(datagram[offset + 1]) << 8 | UInt16(datagram[offset + 2])
        guard (20...24).contains(type), version == 0xFEFD || version == 0xFEFF else { return nil }
        let epoch = UInt16(datagram[offset + 3]) << 8 | UInt16(datagram[offset + 4])
        let length = Int(datagram[offset + 11]) << 8 | Int(datagram[offset + 12])
        guard datagram.count - offset >= 13 + length else { return nil }
        records.append((type, epoch, length))
        offset += 13 + length
    }
    return records
}

/// Splits a datagram into the bytes of its records (header included); nil if it does not
/// consist of whole records.
func dtlsRecordBytes(in datagram: [UInt8]) -> [[UInt8]]? {
    guard let records = dtlsRecords(in: datagram) else { return nil }
    var offset = 0
    return records.map { record in
        defer { offset += 13 + record.length }
        return Array(datagram[offset..<(offset + 13 + record.length)])
    }
}

/// One record with a well-formed DTLS 1.2 header (RFC 6347 §4.1), sequence number 9;
/// `declaredLength` overrides the length field.
func dtlsRecord(
    _ type: UInt8, epoch: UInt16, _ fragment: [UInt8], version: UInt16 = 0xFEFD, declaredLength: Int? = nil
) -> [UInt8] {
    let length = declaredLength ?? fragment.count
    return [type, UInt8(version >> 8), UInt8(version & 0xFF), UInt8(epoch >> 8), UInt8(epoch & 0xFF), 0, 0, 0, 0, 0, 9]
        + [UInt8(length >> 8), UInt8(length & 0xFF)] + fragment
}
