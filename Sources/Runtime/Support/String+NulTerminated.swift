extension String {
    /// The UTF-8 text of a C buffer up to its first NUL (or all of it when it has none), as C calls
    /// such as `inet_ntop` and `ERR_error_string_n` fill it.
    init(nulTerminated buffer: [CChar]) {
        self.init(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
