import Audio
import Foundation
import Testing
@testable import SwitchboardClient

@Suite("Level meter")
struct LevelMeterTests {
    static func frame(_ frequency: Double, amplitude: Double = 8000) throws -> AudioFrame {
        try AudioFrame(rate: .hz48000, samples: (0..<960).map { Int16(amplitude * sin(2 * Double.pi * frequency * (Double($0) + 0.5) / 48_000)) })
    }

    @Test("a tone's frequency and level; odd frames among the last five do not move them")
    func tone() throws {
        let meter = LevelMeter()
        for _ in 0..<6 { meter.receive(try Self.frame(660), from: "m") }
        meter.receive(try Self.frame(1500), from: "m")  // a glitched frame
        meter.receive(try Self.frame(660, amplitude: 300), from: "m")  // a concealed, quieter one
        let reading = try #require(meter.levels["m"])
        #expect(abs(reading.frequency - 660) < 40, "\(reading)")
        #expect(reading.frames == 8)
        #expect(abs(reading.dBov - 20 * log10(8000 / 32768 / 2.0.squareRoot())) < 0.5, "\(reading)")
        for _ in 0..<4 { meter.receive(try Self.frame(1500), from: "m") }
        #expect(abs((meter.levels["m"]?.frequency ?? 0) - 1500) < 60, "a lasting change does move it")
        #expect(meter.levels["other"] == nil)
    }
}
