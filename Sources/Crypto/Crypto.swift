import COpenSSL
/// Hashes, HMAC, JWT, keys, DTLS and SRTP.
public enum CryptoModule {}
