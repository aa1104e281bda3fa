import struct Wire.ICECandidate
import Media

extension ClientSDP {
    /// A trickled or SDP candidate's address, when it is a UDP one (component 1) with a numeric address.
    package static func candidateAddress(_ text: String) -> PeerAddress? {
        guard let c = ICECandidate(text), c.transport.lowercased() == "udp", c.component == 1 else { return nil }
        return PeerAddress(host: c.address, port: c.port)
    }
}
