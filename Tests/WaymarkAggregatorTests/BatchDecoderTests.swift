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
