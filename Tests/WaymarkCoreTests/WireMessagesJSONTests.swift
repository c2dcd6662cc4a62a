import Foundation
import Testing
import WaymarkCore

/// The bridge's and services' wire JSON (written with WaymarkJSON) reads back as the same values
/// through the `Codable` forms that the aggregator and waymark-edge use.
@Suite struct WireMessagesJSONTests {
    @Test func batchReadsBackAsTheSameBatch() throws {
        let device = try #require(DeviceID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:7"))
        let batch = SightingBatch(gateway: "gw-hall", boot: "b0a1", seq: 42, start: 1_780_304_400.125, end: 1_780_304_401.125, sightings: [
            .init(device: device, count: 3, rssiMax: -55, rssiMean: -57.333333333333336, rssiLast: -58, tx: -59,
                  first: 1_780_304_400.2, last: 1_780_304_401.0),
            .init(device: device, count: 1, rssiMax: -80, rssiMean: -80, rssiLast: -80, tx: nil,
                  first: 1_780_304_400.5, last: 1_780_304_400.5, telemetry: .init(batteryMV: 2950, temperatureC: 21.5)),
        ])
        let decoded = try JSONDecoder().decode(SightingBatch.self, from: Data(batch.jsonBytes))
        #expect(decoded == batch)
        let text = String(decoding: batch.jsonBytes, as: UTF8.self)
        #expect(text.hasPrefix(#"{"v":1,"gateway":"gw-hall","boot":"b0a1","seq":42,"start":1780304400.125,"#), "\(text)")
        #expect(!text.contains("null"), "absent optionals are left out: \(text)")
    }

    @Test func statusesReadBackAndLeaveAbsentFieldsOut() throws {
        let online = GatewayStatus(state: .online, gateway: "gw-\"quoted\"", version: "waymark-bridge 1.0", boot: "b1", scan: "on", t: 1_780_304_400.5)
        #expect(try JSONDecoder().decode(GatewayStatus.self, from: Data(online.jsonBytes)) == online)
        let will = GatewayStatus(state: .offline, gateway: "gw-hall")
        #expect(String(decoding: will.jsonBytes, as: UTF8.self) == #"{"state":"offline","gateway":"gw-hall"}"#)

        let service = ServiceStatus(state: .online, service: "waymark-homeassistant", site: "museum", version: "0.1.0", t: 12.5)
        #expect(try JSONDecoder().decode(ServiceStatus.self, from: Data(service.jsonBytes)) == service)
        #expect(String(decoding: ServiceStatus(state: .offline, service: "waymark-aggregator", site: "m").jsonBytes, as: UTF8.self)
                == #"{"state":"offline","service":"waymark-aggregator","site":"m"}"#)
    }
}
