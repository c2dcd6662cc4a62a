import Foundation
import Testing
import WaymarkCore
@testable import WaymarkAggregator

@Suite struct BatchDecoderTests {
    static func sample() -> SightingBatch {
        SightingBatch(gateway: "gw-1", boot: "b0a7", seq: 42, start: 1_700_000_000, end: 1_700_000_001.25, sightings: [
            .init(device: LineVenue.device(1), count: 3, rssiMax: -50, rssiMean: -55.333333333333336, rssiLast: -60.5,
                  tx: -59, first: 1_700_000_000.1, last: 1_700_000_001.2),
            .init(device: DeviceID("mac:aa-bb-cc-dd-ee-ff")!, count: 1, rssiMax: -80, rssiMean: -80, rssiLast: -80,
                  tx: nil, first: 1_700_000_000.5, last: 1_700_000_000.5,
                  telemetry: .init(batteryMV: 2900, temperatureC: 21.25)),
        ])
    }

    @Test func decodesWhatJSONEncoderWritesExactly() throws {
        let batch = Self.sample()
        var decoder = BatchDecoder()
        let decoded = try decoder.decode(Array(try JSONEncoder().encode(batch)))
        #expect(decoded == batch)
    }

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
                var c = JSONCursor(buffer)
                return try c.number()
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
            if let v = JSONCursor.nearestDouble(m, overPowerOfTen: 7) {
                decided += 1
                #expect(v.bitPattern == strtod("\(m / 10_000_000).\(String(m % 10_000_000).leftPadded(7))", nil).bitPattern)
            }
        }
        #expect(decided > 9_900)
    }

    @Test func skipsUnknownMembersAndAcceptsWhitespace() throws {
        let json = """
            { "v": 1, "future": {"nested": [1, "x", {"a": null}]}, "gateway": "gw-1", "boot": "b", "seq": 7,
              "start": 10.5, "end": 11.5, "sightings": [ { "device": "mac:aa-bb-cc-dd-ee-ff", "count": 2,
              "rssi_max": -40, "rssi_mean": -41.5e0, "rssi_last": -43, "tx": null, "first": 10.6, "last": 11.4, "extra": true } ] }
            """
        var decoder = BatchDecoder()
        let b = try decoder.decode(Array(json.utf8))
        #expect(b.seq == 7 && b.sightings.count == 1 && b.sightings[0].rssiMean == -41.5 && b.sightings[0].tx == nil)
    }

    @Test(arguments: [
        ("", "expected '{'"),
        ("{\"v\":1}", "'gateway'"),
        ("{\"v\":1,\"gateway\":\"g\",\"boot\":\"b\",\"seq\":-1,\"start\":1,\"end\":2,\"sightings\":[]}", "'seq'"),
        ("{\"v\":1,\"gateway\":\"g\",\"boot\":\"b\",\"seq\":1,\"start\":1,\"end\":2,\"sightings\":[{\"device\":\"nope\"}]}", "not a device id"),
        ("{\"v\":1,\"gateway\":\"g\",\"boot\":\"b\",\"seq\":1,\"start\":1,\"end\":2,\"sightings\":[]} trailing", "after the batch"),
        ("{\"v\":1,\"gateway\":\"g\",\"boot\":\"b\",\"seq\":1,\"start\":1,\"end\":2,\"sightings\":[{\"device\":\"mac:aa-bb-cc-dd-ee-ff\",\"count\":1}]}", "rssi"),
    ])
    func malformedPayloadsNameTheProblem(json: String, fragment: String) {
        var decoder = BatchDecoder()
        let error = #expect(throws: BatchDecoder.Failure.self) { try decoder.decode(Array(json.utf8)) }
        #expect(error?.description.contains(fragment) == true, "\(error?.description ?? "")")
    }

    @Test func truncatedPayloadsNeverCrash() throws {
        let full = Array(try JSONEncoder().encode(Self.sample()))
        var decoder = BatchDecoder()
        for cut in stride(from: 0, to: full.count - 1, by: 3) {
            #expect(throws: BatchDecoder.Failure.self) { try decoder.decode(Array(full[0..<cut])) }
        }
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
