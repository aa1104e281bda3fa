import Audio
import Foundation

/// Plays a 16-bit PCM WAV file at 48 kHz (other rates are resampled by nearest sample; the first
/// channel of a multi-channel file), once or looping.
public final class WAVFileSource: AudioSource, @unchecked Sendable {
    // Invariant: `position` is touched only by `read`, on the one media thread the source is handed to.
    public enum LoadError: Error, Sendable, CustomStringConvertible {
        case unreadable(String)
        case invalid(WAVFile.ParseError)
        public var description: String {
            switch self {
            case .unreadable(let path): return "cannot read \(path)"
            case .invalid(let e): return "not a usable WAV file: \(e)"
            }
        }
    }

    private let samples: [Int16]
    private let loops: Bool
    private var position = 0

    public init(path: String, loop: Bool = false) throws(LoadError) {
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path) }
        let file: WAVFile
        do { file = try WAVFile([UInt8](data)) } catch { throw .invalid(error) }
        let mono = file.mono
        if file.sampleRate == 48_000 {
            samples = mono
        } else {
            let count = mono.count * 48_000 / file.sampleRate
            samples = (0..<count).map { mono[min(mono.count - 1, $0 * file.sampleRate / 48_000)] }
        }
        loops = loop
    }

    public func read(into frame: inout AudioFrame) -> Bool {
        guard !samples.isEmpty, position < samples.count else { frame.clear(); return false }
        let start = position
        samples.withUnsafeBufferPointer { all in
            frame.copy(from: UnsafeBufferPointer(rebasing: all[start..<min(all.count, start + frame.count)]))
        }
        position += frame.count
        if loops, position >= samples.count { position = 0 }
        return true
    }
}
