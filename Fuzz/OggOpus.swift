// Ogg Opus (OggOpusFileReader, libopusfile): arbitrary bytes as an .opus file; see Support/AudioFile.swift.

func fuzzOggOpus(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    fuzzAudioFile(data, size) { path throws(AudioFileError) in try OggOpusFileReader(path: path) }
}
