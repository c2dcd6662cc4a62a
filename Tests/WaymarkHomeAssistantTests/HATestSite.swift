import WaymarkConfig
import WaymarkCore
import WaymarkHomeAssistant
import Foundation
import Testing

/// The README's three-region museum.
enum HATestSite {
    static let yaml = """
    site: demo-museum
    gateways:
      - { id: gw-entrance, position: [0, 0] }
      - { id: gw-lobby, position: [8, 0], floor: 1 }
      - { id: gw-hall-a, position: [8, 12], floor: 1 }
    regions:
      - { id: entrance, name: Main entrance, gateways: [gw-entrance] }
      - { id: lobby, gateways: [gw-lobby] }
      - { id: hall-a, name: Hall A, gateways: [gw-hall-a] }
    edges: [[entrance, lobby], [lobby, hall-a]]
    tracking:
      ibeacon_uuids: ["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"]
    """
    static let alice = DeviceID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:7")!
    static let bob = DeviceID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:8")!
    static let carol = DeviceID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:9")!

    static func site() throws -> Site { try SiteLoader.parse(yaml: yaml).site }

    static func settings(_ devices: [HomeAssistantDevice]) -> HomeAssistantSettings {
        var s = HomeAssistantSettings(topicPrefix: "waymark/v1/demo-museum")
        s.devices = devices
        s.version = "0.1.0"
        return s
    }

    /// An aggregator device state as docs/aggregator.md shows it.
    static func state(_ device: DeviceID, region: String?, distance: Double? = 1.84, confidence: Double? = 0.934) -> [UInt8] {
        let current = region.map { "\"\($0)\"" } ?? "null"
        let regions = region.map { #"[{"region":"\#($0)","state":"inside","proximity":"near","distance_m":\#(distance.map { "\($0)" } ?? "null")},{"region":"lobby","state":"outside","proximity":"far","distance_m":9.4}]"# } ?? "[]"
        let conf = region == nil ? "null" : confidence.map { "\($0)" } ?? "null"
        return Array(#"{"device":"\#(device)","current_region":\#(current),"confidence":\#(conf),"recorded_region":\#(current),"regions":\#(regions),"updated_at":1780300000.25}"#.utf8)
    }

    /// A JSON object, read with Foundation (an independent reader).
    static func object(_ payload: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
    }
}
