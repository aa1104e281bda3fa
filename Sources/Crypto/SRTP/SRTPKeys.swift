/// SRTP master keys for one DTLS association, already assigned to this endpoint's role.
///
/// RFC 5764 §4.2: the exporter output is `client_key | server_key | client_salt | server_salt`;
/// "local" is what this endpoint protects with, "remote" what it unprotects with.
public struct SRTPKeys: Sendable, Hashable {
    public var localKey: [UInt8]
    public var localSalt: [UInt8]
    public var remoteKey: [UInt8]
    public var remoteSalt: [UInt8]

    public init(localKey: [UInt8], localSalt: [UInt8], remoteKey: [UInt8], remoteSalt: [UInt8]) {
        self.localKey = localKey
        self.localSalt = localSalt
        self.remoteKey = remoteKey
        self.remoteSalt = remoteSalt
    }

    /// Splits exporter output for `profile`; the client's half is local when `isClient`.
    /// Returns nil when `material` has the wrong length for the profile.
    public init?(keyingMaterial material: [UInt8], profile: SRTPProfile, isClient: Bool) {
        let k = profile.keyLength, s = profile.saltLength
        guard material.count == profile.keyingMaterialLength else { return nil }
        let clientKey = Array(material[0..<k])
        let serverKey = Array(material[k..<2 * k])
        let clientSalt = Array(material[2 * k..<2 * k + s])
        let serverSalt = Array(material[2 * k + s..<2 * k + 2 * s])
        if isClient {
            self.init(localKey: clientKey, localSalt: clientSalt, remoteKey: serverKey, remoteSalt: serverSalt)
        } else {
            self.init(localKey: serverKey, localSalt: serverSalt, remoteKey: clientKey, remoteSalt: clientSalt)
        }
    }
}
