import Foundation
import Wire

/// Serves files under a directory with content types and strong ETags (If-None-Match → 304).
///
/// Files are read on first request and cached with their modification time, so edits show up without a restart.
public final class StaticFiles: Sendable {
    public let root: String
    private let cache = CacheBox()

    public init(root: String) {
        self.root = (root as NSString).standardizingPath
    }

    /// Responds for `relativePath` (already stripped of the mount prefix); nil when no such file.
    public func response(for relativePath: String, request: HTTPRequest) -> HTTPResponse? {
        guard var rel = relativePath.removingPercentEncoding else { return nil }
        // A NUL or other control character would be cut or misread by the file system layer (serving
        // `rooms.js%00.html` as the HTML named by the request); no real file is named so.
        guard !rel.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else { return nil }
        if rel.isEmpty || rel.hasSuffix("/") { rel += "index.html" }
        let parts = rel.split(separator: "/")
        guard !parts.contains(where: { $0 == ".." || $0 == "." || $0.hasPrefix(".") }) else { return nil }
        var path = root + "/" + parts.joined(separator: "/")
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else { return nil }
        if isDir.boolValue {
            path += "/index.html"
            guard FileManager.default.fileExists(atPath: path) else { return nil }
        }
        guard let entry = cache.load(path) else { return nil }
        var r: HTTPResponse
        if let inm = request.headers["if-none-match"], inm.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == entry.etag || $0.trimmingCharacters(in: .whitespaces) == "*" }) {
            r = HTTPResponse(status: 304)
        } else {
            r = HTTPResponse(status: 200, body: entry.bytes)
            r.headers["Content-Type"] = Self.contentType(for: path)
        }
        r.headers["ETag"] = entry.etag
        r.headers["Cache-Control"] = "no-cache"
        return r
    }

    public static func contentType(for path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "html", "htm": return "text/html; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "json": return "application/json"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "ico": return "image/x-icon"
        case "wasm": return "application/wasm"
        case "txt", "md": return "text/plain; charset=utf-8"
        case "wav": return "audio/wav"
        case "webmanifest": return "application/manifest+json"
        default: return "application/octet-stream"
        }
    }

    struct Entry: Sendable { var bytes: [UInt8]; var etag: String; var modified: Date }

    final class CacheBox: Sendable {
        private let entries = Mutex<[String: Entry]>([:])

        func load(_ path: String) -> Entry? {
            let attrs = try? FileManager.default.attributesOfItem(atPath: path)
            let modified = attrs?[.modificationDate] as? Date ?? .distantPast
            if let e = entries.withLock({ $0[path] }), e.modified == modified { return e }
            guard let data = FileManager.default.contents(atPath: path) else { return nil }
            let bytes = [UInt8](data)
            // FNV-1a over the content: strong enough to detect changes, cheap to compute.
            var h: UInt64 = 0xcbf29ce484222325
            for b in bytes { h = (h ^ UInt64(b)) &* 0x100000001b3 }
            let e = Entry(bytes: bytes, etag: "\"\(String(h, radix: 16))-\(bytes.count)\"", modified: modified)
            entries.withLock { $0[path] = e }
            return e
        }
    }
}

import Synchronization
