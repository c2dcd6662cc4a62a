import Testing
import WaymarkCore
import WaymarkFusion
@testable import WaymarkAggregator

/// The published JSON, byte for byte: the payloads are built by hand (`JSONText`), so their exact
/// text (key order, escapes, number forms) is pinned here.
@Suite struct DevicePayloadsTests {
    let device = DeviceID("mac:aa-bb-cc-dd-ee-ff")!

    @Test func stateListsTheMonitoredRegionsWithAStateInSetOrderWithEscapes() {
        var v = DeviceViews.View()
        v.current = "r\"1"
        v.live = "r2"
        v.confidence = 0.75
        v.regions = ["r2": .init(state: .inside, proximity: .near, distanceM: 1.25),
                     "x\n": .init(state: .outside, proximity: .unknown, distanceM: nil)]
        v.monitored = ["x\n", "r\"1", "r2"]
        v.updatedAt = 1_780_300_000.5
        let text = String(decoding: DevicePayloads.state(device, v), as: UTF8.self)
        #expect(text == #"{"device":"mac:aa-bb-cc-dd-ee-ff","current_region":"r2","confidence":0.75,"recorded_region":"r\"1","#
            + #""regions":[{"region":"x\u000a","state":"outside","proximity":"unknown","distance_m":null},"#
            + #"{"region":"r2","state":"inside","proximity":"near","distance_m":1.25}],"updated_at":1780300000.5}"#)
    }

    @Test func regionChangeAndAckKeepTheirShapeAndNumberForms() {
        let change = FusionOutput.LocationChange(t: 1_780_300_000, device: device, region: nil, confidence: 1)
        #expect(String(decoding: DevicePayloads.regionChange(change, from: "hall"), as: UTF8.self)
            == #"{"type":"region_change","device":"mac:aa-bb-cc-dd-ee-ff","from":"hall","to":null,"t":1780300000,"confidence":1}"#)
        #expect(String(decoding: DevicePayloads.ack(GatewayAck(boot: "b1", seq: 42, resendFrom: 40, resendTo: 42)), as: UTF8.self)
            == #"{"boot":"b1","seq":42,"resend_from":40,"resend_to":42}"#)
    }
}
