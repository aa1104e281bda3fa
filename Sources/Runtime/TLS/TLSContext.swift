import COpenSSL
import CShims
import Glibc

public struct TLSError: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ what: String) {
        var text = what
        let code = ERR_get_error()
        if code != 0 {
            var buf = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buf, buf.count)
            text += ": " + String(nulTerminated: buf)
        }
        ERR_clear_error()
        description = text
    }
}

/// An OpenSSL TLS 1.2/1.3 context for a server listener or for clients.
///
/// The SSL_CTX is configured once in init and only read afterwards (OpenSSL allows concurrent SSL_new
/// on a configured context), which makes the unchecked Sendable conformance sound.
public final class TLSContext: @unchecked Sendable {
    let ctx: OpaquePointer
    public let isServer: Bool

    /// A server context from PEM certificate chain and private key files.
    public init(certificateFile: String, keyFile: String) throws {
        guard let ctx = SSL_CTX_new(TLS_server_method()) else { throw TLSError("SSL_CTX_new") }
        self.ctx = ctx
        isServer = true
        Self.setModes(ctx)
        _ = sb_ssl_ctx_set_min_proto(ctx, TLS1_2_VERSION)
        guard SSL_CTX_use_certificate_chain_file(ctx, certificateFile) == 1 else { throw TLSError("certificate \(certificateFile)") }
        guard SSL_CTX_use_PrivateKey_file(ctx, keyFile, SSL_FILETYPE_PEM) == 1 else { throw TLSError("private key \(keyFile)") }
        guard SSL_CTX_check_private_key(ctx) == 1 else { throw TLSError("key does not match certificate") }
        let alpn: [UInt8] = [8] + Array("http/1.1".utf8)
        _ = alpn
    }

    /// A client context; verifies peers against `caFile` (or the system store) unless `verify` is false.
    /// With `systemStore`, the system store is trusted besides `caFile`.
    public init(clientCAFile caFile: String? = nil, verify: Bool = true, systemStore: Bool = false) throws {
        guard let ctx = SSL_CTX_new(TLS_client_method()) else { throw TLSError("SSL_CTX_new") }
        self.ctx = ctx
        isServer = false
        Self.setModes(ctx)
        _ = sb_ssl_ctx_set_min_proto(ctx, TLS1_2_VERSION)
        if verify {
            SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nil)
            if let caFile {
                guard SSL_CTX_load_verify_locations(ctx, caFile, nil) == 1 else { throw TLSError("CA file \(caFile)") }
            }
            if caFile == nil || systemStore { SSL_CTX_set_default_verify_paths(ctx) }
        } else {
            SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nil)
        }
    }

    deinit { SSL_CTX_free(ctx) }

    /// Partial writes and a moving write buffer match how channels queue bytes: after WANT_WRITE the retry
    /// comes from the outbound queue, not the caller's buffer (without this OpenSSL fails with "bad write
    /// retry"). Released buffers keep idle TLS connections small.
    static func setModes(_ ctx: OpaquePointer) {
        let modes = SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS
        _ = SSL_CTX_ctrl(ctx, SSL_CTRL_MODE, Int(modes), nil)
    }
}

/// TLS over a non-blocking socket; the handshake runs inside the first reads and writes. `package` for
/// SIP over TLS (RFC 3261 §26.2), which frames its own messages over it.
package final class TLSStream: ByteStream {
    package let fd: Int32
    let ssl: OpaquePointer
    private var lastWantWrite = false

    package init(fd: Int32, context: TLSContext, serverName: String? = nil) throws {
        guard let ssl = SSL_new(context.ctx) else { throw TLSError("SSL_new") }
        self.fd = fd
        self.ssl = ssl
        SSL_set_fd(ssl, fd)
        if context.isServer {
            SSL_set_accept_state(ssl)
        } else {
            if let name = serverName {
                // An address (IPv6 with or without brackets, hex digits included) is checked against IP names
                // and sent without SNI (RFC 6066 §3); anything else is a host name.
                let serverName = name.hasPrefix("[") && name.hasSuffix("]") ? String(name.dropFirst().dropLast()) : name
                let isAddress = serverName.contains(":") || serverName.allSatisfy({ $0.isNumber || $0 == "." })
                if !isAddress { _ = sb_ssl_set_tlsext_host_name(ssl, serverName) }
                let param = SSL_get0_param(ssl)
                if isAddress {
                    X509_VERIFY_PARAM_set1_ip_asc(param, serverName)
                } else {
                    X509_VERIFY_PARAM_set1_host(param, serverName, 0)
                }
            }
            SSL_set_connect_state(ssl)
            lastWantWrite = true
        }
    }

    deinit { SSL_free(ssl) }

    package var wantsWritable: Bool { lastWantWrite }

    /// Whether the handshake has finished (a peer that never finishes it is closed by its owner's timer).
    package var isHandshakeComplete: Bool { SSL_is_init_finished(ssl) == 1 }

    package func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        ERR_clear_error()
        let n = SSL_read(ssl, buffer.baseAddress, Int32(min(buffer.count, Int(Int32.max))))
        if n > 0 {
            lastWantWrite = false
            return .bytes(Int(n))
        }
        return classify(n)
    }

    package func write(_ bytes: UnsafeRawBufferPointer) -> IOResult {
        if bytes.isEmpty { return .bytes(0) }
        ERR_clear_error()
        let n = SSL_write(ssl, bytes.baseAddress, Int32(min(bytes.count, 1 << 20)))
        if n > 0 {
            lastWantWrite = false
            return .bytes(Int(n))
        }
        return classify(n)
    }

    private func classify(_ rc: Int32) -> IOResult {
        let err = SSL_get_error(ssl, rc)
        switch err {
        case SSL_ERROR_WANT_READ:
            lastWantWrite = false
            return .wouldBlock
        case SSL_ERROR_WANT_WRITE:
            lastWantWrite = true
            return .wouldBlock
        case SSL_ERROR_ZERO_RETURN:
            return .eof
        case SSL_ERROR_SYSCALL:
            let e = errno
            if e == EAGAIN || e == EINTR { return .wouldBlock }
            return .eof
        default:
            ERR_clear_error()
            return .failed(EPROTO)
        }
    }

    package func shutdown() {
        ERR_clear_error()
        if SSL_is_init_finished(ssl) == 1 { _ = SSL_shutdown(ssl) }
        ERR_clear_error()
    }
}
