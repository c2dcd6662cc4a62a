import Foundation
import Testing
import WaymarkCore
@testable import WaymarkEdge

@Suite struct BatchCodingTests {
    @Test("the hand-written batch JSON decodes back to the same batch, escapes included")
    func roundTrip() throws {
        let batch = SightingBatch(gateway: "gw \"1\"\\\n", boot: "b00t", seq: 18_446_744_073_709_551_615, start: 1_700_000_000,
                                  end: 1_700_000_001.25, sightings: [
            .init(device: DeviceID("mac:aa-bb-cc-dd-ee-ff")!, count: 3, rssiMax: -60, rssiMean: -70.33333333333333,
                  rssiLast: -80, tx: -59, first: 1_700_000_000.125, last: 1_700_000_000.875),
            .init(device: DeviceID("anon:0011223344556677")!, count: 1, rssiMax: -90, rssiMean: -90, rssiLast: -90,
                  tx: nil, first: 1_700_000_000.5, last: 1_700_000_000.5,
                  telemetry: .init(batteryMV: 2950, temperatureC: 21.5)),
            .init(device: DeviceID("mac:aa-bb-cc-dd-ee-01")!, count: 1, rssiMax: -1, rssiMean: -1, rssiLast: -1,
                  tx: nil, first: 1, last: 1, telemetry: .init(batteryMV: nil, temperatureC: -3.25)),
        ])
        let bytes = BatchCoding.encode(batch)
        #expect(try JSONDecoder().decode(SightingBatch.self, from: Data(bytes)) == batch)
        #expect(try JSONSerialization.jsonObject(with: Data(bytes)) is [String: Any])
    }
}
