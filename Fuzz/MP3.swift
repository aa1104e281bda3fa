// MP3 (MP3FileReader, libmpg123): arbitrary bytes as an .mp3 file; see Support/AudioFile.swift.

func fuzzMP3(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    fuzzAudioFile(data, size) { path throws(AudioFileError) in
        let reader = try MP3FileReader(path: path)
        precondition([8000, 11_025, 12_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000].contains(reader.sampleRate),
                     "not an MPEG audio rate: \(reader.sampleRate)")
        return reader
    }
}
