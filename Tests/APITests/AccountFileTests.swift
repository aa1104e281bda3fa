import Foundation
import Platform
import Testing

/// `account.json` against crashes during the first start: the store and the file must agree.
@Suite("Account credentials file")
struct AccountFileTests {
    private func directory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("account-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    private func fileCredentials(_ path: String) throws -> (String, String) {
        let data = try #require(FileManager.default.contents(atPath: path))
        let o = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return (try #require(o["api_key"] as? String), try #require(o["api_secret"] as? String))
    }

    @Test("a file lost after the account row committed is rewritten from the store at the next start")
    func missingFileIsRecovered() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (account, created) = try PlatformCore(dataDirectory: dir).accounts.ensurePrimary()
        #expect(created)
        // What a kill -9 between the commit and the rename left behind: the row, a temp file, no account.json.
        try FileManager.default.removeItem(atPath: dir + "/account.json")
        _ = FileManager.default.createFile(atPath: dir + "/account.json.tmp", contents: Data("{\"api_k".utf8))
        let core = try PlatformCore(dataDirectory: dir)
        let (again, createdAgain) = try core.accounts.ensurePrimary()
        #expect(!createdAgain && again == account)
        let (key, secret) = try fileCredentials(core.accounts.accountFile)
        #expect(key == account.apiKey && secret == account.apiSecret)
        let mode = try FileManager.default.attributesOfItem(atPath: core.accounts.accountFile)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test("a file that disagrees with the store (a rotation cut short) is replaced by the store's credentials")
    func staleFileIsReplaced() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let core = try PlatformCore(dataDirectory: dir)
        let (account, _) = try core.accounts.ensurePrimary()
        let rotated = try core.accounts.rotateSecret(apiKey: account.apiKey)
        let stale = #"{"api_key": "\#(account.apiKey)", "api_secret": "\#(account.apiSecret)"}"#
        _ = FileManager.default.createFile(atPath: dir + "/account.json", contents: Data(stale.utf8))
        _ = try PlatformCore(dataDirectory: dir).accounts.ensurePrimary()
        let (_, secret) = try fileCredentials(dir + "/account.json")
        #expect(secret == rotated.apiSecret)
    }
}
