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
                     "1780300000.123456", "12345678.1234567", "3.0000000000000004"]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let v = Double.random(in: -2e9...2e9, using: &rng)
            texts.append("\(v)")
            texts.append(String(format: "%.\(Int.random(in: 0...6, using: &rng))f", v))
            texts.append("\((v / 1000).rounded() / 1000)")
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
