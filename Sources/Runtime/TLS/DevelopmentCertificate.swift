import COpenSSL
import CShims
import Foundation

/// A self-signed development CA and a server certificate it signs, kept in the data directory.
///
/// Clients that insist on HTTPS (browsers on other machines, SDKs with hard-coded https) trust `ca.pem`.
public struct DevelopmentCertificate: Sendable {
    public let caFile: String
    public let certificateFile: String
    public let keyFile: String

    /// Loads `<dir>/tls/{ca,server,server-key}.pem`, creating them on first use.
    /// Returns whether they were created now.
    public static func ensure(in dataDirectory: String, hosts: [String]) throws -> (DevelopmentCertificate, created: Bool) {
        let dir = dataDirectory + "/tls"
        let cert = DevelopmentCertificate(caFile: dir + "/ca.pem", certificateFile: dir + "/server.pem", keyFile: dir + "/server-key.pem")
        let fm = FileManager.default
        if fm.fileExists(atPath: cert.caFile), fm.fileExists(atPath: cert.certificateFile), fm.fileExists(atPath: cert.keyFile) {
            return (cert, false)
        }
        try fm.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let caKey = try makeKey()
        defer { EVP_PKEY_free(caKey) }
        let caCert = try makeCertificate(subject: "Switchboard Development CA", key: caKey, issuerKey: caKey, issuer: nil, isCA: true, hosts: [])
        defer { X509_free(caCert) }
        let serverKey = try makeKey()
        defer { EVP_PKEY_free(serverKey) }
        let serverCert = try makeCertificate(subject: hosts.first ?? "localhost", key: serverKey, issuerKey: caKey, issuer: caCert, isCA: false, hosts: hosts)
        defer { X509_free(serverCert) }
        try write(pem: { PEM_write_bio_X509($0, caCert) }, to: cert.caFile, mode: 0o644)
        try write(pem: { PEM_write_bio_X509($0, serverCert) }, to: cert.certificateFile, mode: 0o644)
        try write(pem: { PEM_write_bio_PrivateKey($0, serverKey, nil, nil, 0, nil, nil) }, to: cert.keyFile, mode: 0o600)
        return (cert, true)
    }

    private static func makeKey() throws -> OpaquePointer {
        guard let ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil) else { throw TLSError("EVP_PKEY_CTX_new_id") }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_keygen_init(ctx) == 1,
              EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx, NID_X9_62_prime256v1) == 1 else { throw TLSError("EC keygen init") }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen(ctx, &key) == 1, let key else { throw TLSError("EC keygen") }
        return key
    }

    private static func makeCertificate(subject: String, key: OpaquePointer, issuerKey: OpaquePointer, issuer: OpaquePointer?,
                                        isCA: Bool, hosts: [String]) throws -> OpaquePointer {
        guard let x = X509_new() else { throw TLSError("X509_new") }
        X509_set_version(x, 2)
        let serial = ASN1_INTEGER_new()
        var rnd = [UInt8](repeating: 0, count: 8)
        RAND_bytes(&rnd, 8)
        let bn = BN_bin2bn(rnd, 8, nil)
        BN_to_ASN1_INTEGER(bn, serial)
        BN_free(bn)
        X509_set_serialNumber(x, serial)
        ASN1_INTEGER_free(serial)
        X509_gmtime_adj(X509_getm_notBefore(x), -86400)
        X509_gmtime_adj(X509_getm_notAfter(x), isCA ? 3650 * 86400 : 825 * 86400)
        X509_set_pubkey(x, key)
        let name = X509_get_subject_name(x)
        X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, "Switchboard", -1, -1, 0)
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, subject, -1, -1, 0)
        X509_set_issuer_name(x, issuer.map { X509_get_subject_name($0) } ?? name)
        var v3 = X509V3_CTX()
        X509V3_set_ctx(&v3, issuer ?? x, x, nil, nil, 0)
        var exts: [(Int32, String)] = []
        if isCA {
            exts = [(NID_basic_constraints, "critical,CA:TRUE"), (NID_key_usage, "critical,keyCertSign,cRLSign"),
                    (NID_subject_key_identifier, "hash")]
        } else {
            let san = hosts.map { h in
                h.allSatisfy({ $0.isNumber || $0 == "." || $0 == ":" || $0.isHexDigit }) && (h.contains(".") || h.contains(":"))
                    && !h.contains(where: { $0.isLetter && !$0.isHexDigit }) ? "IP:\(h)" : "DNS:\(h)"
            }.joined(separator: ",")
            exts = [(NID_basic_constraints, "critical,CA:FALSE"), (NID_key_usage, "critical,digitalSignature,keyEncipherment"),
                    (NID_ext_key_usage, "serverAuth"), (NID_subject_alt_name, san)]
        }
        for (nid, value) in exts {
            guard let ext = X509V3_EXT_conf_nid(nil, &v3, nid, value) else { throw TLSError("extension \(value)") }
            X509_add_ext(x, ext, -1)
            X509_EXTENSION_free(ext)
        }
        guard X509_sign(x, issuerKey, EVP_sha256()) > 0 else { throw TLSError("X509_sign") }
        return x
    }

    private static func write(pem: (OpaquePointer) -> Int32, to path: String, mode: Int) throws {
        guard let bio = BIO_new(BIO_s_mem()) else { throw TLSError("BIO_new") }
        defer { BIO_free(bio) }
        guard pem(bio) == 1 else { throw TLSError("PEM write") }
        var ptr: UnsafeMutablePointer<CChar>?
        let len = sb_bio_get_mem_data(bio, &ptr)
        let data = Data(bytes: ptr!, count: len)
        guard FileManager.default.createFile(atPath: path, contents: data, attributes: [.posixPermissions: mode]) else {
            throw TLSError("writing \(path)")
        }
    }
}
