import Crypto
import Foundation
import Platform
import Runtime
import Synchronization

/// A development demo app server's own application and signing key: created in the primary account on
/// first use and kept in a file of the data directory (mode 0600), so tokens stay valid across restarts.
final class DemoApplication: Sendable {
    let core: PlatformCore
    let apiKey: String
    let name: String
    let file: String
    private let state = Mutex<(applicationID: String, key: RSAPrivateKey)?>(nil)

    init(core: PlatformCore, apiKey: String, name: String, file: String) {
        self.core = core
        self.apiKey = apiKey
        self.name = name
        self.file = file
    }

    /// Whether an earlier run left the application's file.
    var saved: Bool { FileManager.default.fileExists(atPath: file) }

    /// The application and its key, recovered from the file or created, once.
    func get() throws -> (applicationID: String, key: RSAPrivateKey) {
        try state.withLock { cached in
            if let cached { return cached }
            if let data = FileManager.default.contents(atPath: file),
               let object = try? JSONSerialization.jsonObject(with: data) as? [String: String],
               let id = object["id"], let pem = object["private_key"],
               (try? core.applications.get(id: id)) != nil, let key = try? RSAPrivateKey(pem: pem) {
                cached = (id, key)
                return (id, key)
            }
            let (app, pem) = try core.applications.create(apiKey: apiKey, input: ApplicationInput(name: name))
            guard let pem else { throw APIError.internalError("The demo application has no private key.") }
            let json = try JSONSerialization.data(withJSONObject: ["id": app.id, "private_key": pem], options: [.sortedKeys])
            _ = FileManager.default.createFile(atPath: file, contents: json, attributes: [.posixPermissions: 0o600])
            let key = try RSAPrivateKey(pem: pem)
            cached = (app.id, key)
            return (app.id, key)
        }
    }
}
