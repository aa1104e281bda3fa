import Crypto
import Foundation
import Wire

/// Signs webhook requests the way receivers verify them: `Authorization: Bearer <HS256 JWT>` with the
/// application's signature secret and a `payload_hash` binding the body.
public enum WebhookSigner {
    public static func authorization(body: [UInt8], application: Application, now: Date = Date()) -> String? {
        let claims: [String: JSONValue] = [
            "iat": .number(Double(Int(now.timeIntervalSince1970))),
            "jti": .string(UUID4.generate()),
            "iss": "Vonage",
            "payload_hash": .string(Hex.encode(SHA256.hash(body))),
            "api_key": .string(application.apiKey),
            "application_id": .string(application.id),
        ]
        guard let token = try? JWT.sign(claims: claims, key: .hs256(Array(application.signatureSecret.utf8))) else { return nil }
        return "Bearer " + token
    }
}
