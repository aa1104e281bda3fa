import Audio
import Foundation

/// Plays a WAV file (8- or 16-bit PCM, any channel count mixed down to mono, through Audio's
/// `WAVFileReader`) at 48 kHz, once or looping. 8 and 16 kHz files go through Audio's `Resampler`;
/// other rates are converted by nearest sample.
public final class WAVFileSource: AudioSource, @unchecked Sendable {
    // Invariant: `position` is touched only by `read`, on the one media thread the source is handed to.
    public enum LoadError: Error, Sendable, CustomStringConvertible {
        case unreadable(String)
        case invalid(AudioFileError)
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
        let rate: Int
        let mono: [Int16]
        do {
            let reader = try WAVFileReader(path: path)
            rate = reader.sampleRate
            mono = try reader.readAll()
        } catch .open {
            throw .unreadable(path)
        } catch {
            throw .invalid(error)
        }
        samples = Self.to48k(mono, rate: rate)
        loops = loop
    }

    static func to48k(_ mono: [Int16], rate: Int) -> [Int16] {
        guard rate != 48_000, !mono.isEmpty, rate > 0 else { return mono }
        if let input = SampleRate(hertz: rate), let resampler = try? Resampler(from: input, to: .hz48000) {
            var out: [Int16] = []
            out.reserveCapacity(mono.count * 48_000 / rate + AudioFrame(rate: .hz48000).count)
            var source = AudioFrame(rate: input)
            var destination = AudioFrame(rate: .hz48000)
            var i = 0
            while i < mono.count {
                let n = min(source.count, mono.count - i)
                source.clear()
                mono.withUnsafeBufferPointer { all in source.copy(from: UnsafeBufferPointer(rebasing: all[i..<i + n])) }
                guard (try? resampler.process(source, into: &destination)) != nil else { break }
                destination.withSamples { out += $0.prefix(n * 48_000 / rate) }
                i += n
            }
            return out
        }
        let count = mono.count * 48_000 / rate
        return (0..<count).map { mono[min(mono.count - 1, $0 * rate / 48_000)] }
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
