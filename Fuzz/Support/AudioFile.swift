// The file readers' fuzz targets (MP3, OggOpus): MP3FileReader and OggOpusFileReader over Debian's
// libmpg123 and libopusfile, and FilePlayback's resampling to a call's rate. Arbitrary bytes as a file
// give samples or a typed error, never a crash, a hang or more than the reader was asked for.
import Foundation

/// This process's scratch file: the readers take a path, as the server's players do.
private let scratchPath = FileManager.default.temporaryDirectory
    .appendingPathComponent("switchboard-fuzz-\(getpid()).bin").path

/// At most this many samples are read from one input (a few kilobytes of Opus can hold minutes).
private let sampleCap = 1_000_000

/// Reads the input twice: in blocks whose sizes the first byte picks, then as 20 ms frames at 8 kHz
/// through `FilePlayback`; both stop at the end, at the first error, or at `sampleCap`.
func fuzzAudioFile(_ data: UnsafePointer<UInt8>, _ size: Int,
                   open: (String) throws(AudioFileError) -> any AudioFileReader) -> CInt {
    guard FileManager.default.createFile(atPath: scratchPath, contents: Data(bytes: data, count: size)) else {
        fatalError("cannot write \(scratchPath)")
    }
    let blockSize = 1 + (size > 0 ? Int(data[0]) * 37 : 0)
    var block = [Int16](repeating: 0, count: blockSize)
    if let reader = try? open(scratchPath) {
        var total = 0
        while total < sampleCap {
            guard let n = try? block.withUnsafeMutableBufferPointer({ (b) throws(AudioFileError) in try reader.read(into: b) }) else { break }
            precondition(n >= 0 && n <= blockSize, "read \(n) samples into a block of \(blockSize)")
            if n == 0 { break }
            total += n
        }
    }
    if let reader = try? open(scratchPath), let playback = try? FilePlayback(reader, rate: .hz8000) {
        var frame = AudioFrame(rate: .hz8000)
        var frames = 0
        while frames < sampleCap / 160, (try? playback.next(into: &frame)) == true { frames += 1 }
        precondition(frame.count == 160, "a frame of \(frame.count) samples at 8 kHz")
    }
    return 0
}
