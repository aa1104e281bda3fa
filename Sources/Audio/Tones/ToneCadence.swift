/// A repeating tone pattern: steps of one or two frequencies (or silence) with durations.
public struct ToneCadence: Sendable, Hashable {
    public struct Step: Sendable, Hashable {
        /// Frequencies summed in this step; empty for silence.
        public var frequencies: [Double]
        public var milliseconds: Int
        public init(_ frequencies: [Double], milliseconds: Int) {
            self.frequencies = frequencies
            self.milliseconds = milliseconds
        }
        public static func silence(_ milliseconds: Int) -> Step { Step([], milliseconds: milliseconds) }
    }

    public var steps: [Step]
    /// Repeats forever when true; plays once otherwise.
    public var repeats: Bool

    public init(_ steps: [Step], repeats: Bool) {
        self.steps = steps
        self.repeats = repeats
    }

    /// The total length of one cycle in milliseconds.
    public var cycleMilliseconds: Int { steps.reduce(0) { $0 + $1.milliseconds } }

    /// A single beep (the "start recording" beep): 1 kHz for 250 ms.
    public static let beep = ToneCadence([Step([1000], milliseconds: 250)], repeats: false)

    /// The ringback a caller hears in `country` (ISO 3166 alpha-2), nil when unknown.
    /// Values from ITU-T E.180 Supplement 2 (national tones).
    public static func ringback(country: String) -> ToneCadence? {
        switch country.uppercased() {
        case "US", "CA": ToneCadence([Step([440, 480], milliseconds: 2000), .silence(4000)], repeats: true)
        case "GB", "UK", "IE":
            ToneCadence([Step([400, 450], milliseconds: 400), .silence(200), Step([400, 450], milliseconds: 400), .silence(2000)], repeats: true)
        case "DE", "AT", "CH", "NL": ToneCadence([Step([425], milliseconds: 1000), .silence(4000)], repeats: true)
        case "FR", "BE": ToneCadence([Step([440], milliseconds: 1500), .silence(3500)], repeats: true)
        case "JP": ToneCadence([Step([384, 416], milliseconds: 1000), .silence(2000)], repeats: true)
        case "IT", "ES": ToneCadence([Step([425], milliseconds: 1000), .silence(4000)], repeats: true)
        case "AU": ToneCadence([Step([425, 450], milliseconds: 400), .silence(200), Step([425, 450], milliseconds: 400), .silence(2000)], repeats: true)
        default: nil
        }
    }
}
