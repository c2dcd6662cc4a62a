import Foundation
import Testing
@testable import WaymarkJSON

/// Decimal to Double: the fast paths against strtod, bit for bit.
@Suite struct JSONNumberTests {
    /// The decimal fast path must give exactly what strtod gives (correct rounding).
    @Test func numbersDecodeExactlyLikeStrtod() throws {
        var texts = ["0", "-0", "0.0", "-0.0", "1780300000.05", "-59", "-55.333333333333336", "1700000001.25", "0.1",
                     "123456789012345", "1234567890123456", "99999999999999.9", "0.000000000000001", "1e3", "-2.5E-3",
                     "1780300000.123456", "12345678.1234567", "3.0000000000000004", "1763880123.1734567",
                     "9007199254740993.5", "0.30000000000000004", "1700000000.0000001", "4503599627370496.5", "2.2250738585072014",
                     "123456789012345678.9", "1.0000000000000002", "0.9999999999999999"]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let v = Double.random(in: -2e9...2e9, using: &rng)
            texts.append("\(v)")
            texts.append(String(format: "%.\(Int.random(in: 0...6, using: &rng))f", v))
            texts.append("\((v / 1000).rounded() / 1000)")
            let t = Double.random(in: 1.5e9...2e9, using: &rng)
            texts.append("\(t)")
            texts.append(String(format: "%.\(Int.random(in: 7...9, using: &rng))f", t))
            texts.append("\(Double.random(in: 0.001...100, using: &rng))")
        }
        for text in texts {
            let bytes = Array(text.utf8) + [0x2C]
            let parsed = try bytes.withUnsafeBufferPointer { buffer in
                var c = JSONReader(buffer)
                return try c.readNumber()
            }
            let expected = strtod(text, nil)
            #expect(parsed.bitPattern == expected.bitPattern, "\(text)")
        }
    }

    /// The exact check decides nearly every 16–18 digit timestamp itself (strtod is the slow part).
    @Test func longTimestampsAreMostlyDecidedWithoutStrtod() {
        var rng = SystemRandomNumberGenerator()
        var decided = 0
        for _ in 0..<10_000 {
            let m = UInt64.random(in: 15_000_000_000_000_000...19_999_999_999_999_999, using: &rng)
            if let v = JSONNumber.nearestDouble(m, overPowerOfTen: 7) {
                decided += 1
                #expect(v.bitPattern == strtod("\(m / 10_000_000).\(String(m % 10_000_000).leftPadded(7))", nil).bitPattern)
            }
        }
        #expect(decided > 9_900)
    }

    @Test("JSONNumber.parse reads a whole number text and nothing else")
    func parseWholeText() {
        for (text, value) in [("12", 12.0), ("-0.5", -0.5), ("1e3", 1000), ("0.001", 0.001)] {
            Array(text.utf8).withUnsafeBufferPointer { #expect(JSONNumber.parse($0) == value) }
        }
        for text in ["-", "1.2.3", "1e", "abc"] {
            Array(text.utf8).withUnsafeBufferPointer { #expect(JSONNumber.parse($0) == nil) }
        }
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
