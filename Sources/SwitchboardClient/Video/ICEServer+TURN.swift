import Foundation
import Media
import MediaLoad

/// The TURN server a client's media connection gathers a relayed candidate on, and whether all its media goes
/// through it (relay-only) or the relayed candidate is checked beside its own addresses.
struct MediaRelay: Sendable {
    let server: TURNServer
    let only: Bool
}

extension [ICEServer] {
    /// The relay `policy` gives a client's media: the first TURN server over UDP among these, relay-only for `.relay`;
    /// nil when there is none (an error for relay-only, which the caller words).
    func mediaRelay(_ policy: ICETransportPolicy) async -> MediaRelay? {
        await firstTURNOverUDP().map { MediaRelay(server: $0, only: policy == .relay) }
    }

    /// The first `turn:` URL over UDP (`?transport=udp` or none) with a credential, its host resolved.
    func firstTURNOverUDP() async -> TURNServer? {
        for server in self {
            guard let username = server.username, let password = server.credential else { continue }
            for url in server.urls {
                guard url.hasPrefix("turn:") else { continue }
                let rest = url.dropFirst("turn:".count)
                let parts = rest.split(separator: "?", maxSplits: 1)
                guard let hostPort = parts.first, parts.count == 1 || parts[1] == "transport=udp" else { continue }
                var host = String(hostPort), port: UInt16 = 3478
                if hostPort.hasPrefix("["), let close = hostPort.firstIndex(of: "]") {
                    host = String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
                    if let p = UInt16(hostPort[close...].dropFirst(2)) { port = p }
                } else if let colon = hostPort.lastIndex(of: ":"), !hostPort[..<colon].contains(":") {
                    host = String(hostPort[..<colon])
                    guard let p = UInt16(hostPort[hostPort.index(after: colon)...]) else { continue }
                    port = p
                }
                guard let address = await Self.resolve(host, port: port) else { continue }
                return TURNServer(address: address, username: username, password: password)
            }
        }
        return nil
    }

    /// A numeric host as it is, a name by the system's resolver (first address).
    private static func resolve(_ host: String, port: UInt16) async -> PeerAddress? {
        if let numeric = PeerAddress(host: host, port: port) { return numeric }
        let lookup = Task.detached { () -> PeerAddress? in
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
            var result: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, nil, &hints, &result) == 0, let first = result else { return nil }
            defer { freeaddrinfo(result) }
            guard let raw = first.pointee.ai_addr else { return nil }
            var storage = sockaddr_storage()
            Swift.withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: raw, count: Int(first.pointee.ai_addrlen))) }
            guard var address = withUnsafePointer(to: &storage, { PeerAddress(storage: $0) }) else { return nil }
            address.port = port
            return address
        }
        return await lookup.value
    }
}
