import Audio
import Foundation

/// The audio file formats players read and recorders write.
public enum AudioFileKind: String, Sendable, Hashable, Codable, CaseIterable {
    case wav, mp3, ogg

    /// By the first bytes: `RIFF…WAVE`, `OggS`, an ID3 tag or an MPEG audio frame sync.
    public static func sniff(_ head: [UInt8]) -> AudioFileKind? {
        if head.count >= 12, head[0..<4].elementsEqual("RIFF".utf8), head[8..<12].elementsEqual("WAVE".utf8) { return .wav }
        if head.count >= 4, head[0..<4].elementsEqual("OggS".utf8) { return .ogg }
        if head.count >= 3, head[0..<3].elementsEqual("ID3".utf8) { return .mp3 }
        if head.count >= 2, head[0] == 0xFF, head[1] & 0xE0 == 0xE0 { return .mp3 }
        return nil
    }

    static func sniff(path: String) throws(AudioFileError) -> AudioFileKind? {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw .open(path: path, errno: ENOENT) }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 12)).map { [UInt8]($0) } ?? []
        return sniff(head)
    }

    public var mimeType: String {
        switch self {
        case .wav: "audio/wav"
        case .mp3: "audio/mpeg"
        case .ogg: "audio/ogg"
        }
    }
}
