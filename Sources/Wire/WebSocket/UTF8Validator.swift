/// Incremental UTF-8 well-formedness check (Unicode Table 3-7), so a text message split
/// over many frames fails at the first bad byte instead of after the last fragment.
public struct UTF8Validator: Sendable, Hashable {
    private var pending: UInt8 = 0
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    public init() {}

    /// True when no multi-byte sequence is left open.
    public var isComplete: Bool { pending == 0 }

    /// Feeds more bytes; false as soon as they cannot be part of well-formed UTF-8.
    public mutating func validate(_ bytes: some Sequence<UInt8>) -> Bool {
        for byte in bytes {
            if pending == 0 {
                if byte < 0x80 { continue }
                switch byte {
                case 0xC2...0xDF: pending = 1
                case 0xE0: pending = 2; lower = 0xA0
                case 0xE1...0xEC, 0xEE...0xEF: pending = 2
                case 0xED: pending = 2; upper = 0x9F
                case 0xF0: pending = 3; lower = 0x90
                case 0xF1...0xF3: pending = 3
                case 0xF4: pending = 3; upper = 0x8F
                default: return false
                }
            } else {
                guard byte >= lower && byte <= upper else { return false }
                pending -= 1
                lower = 0x80
                upper = 0xBF
            }
        }
        return true
    }

    /// Whether `bytes` is complete, well-formed UTF-8.
    public static func isValid(_ bytes: some Sequence<UInt8>) -> Bool {
        var validator = UTF8Validator()
        return validator.validate(bytes) && validator.isComplete
    }
}
