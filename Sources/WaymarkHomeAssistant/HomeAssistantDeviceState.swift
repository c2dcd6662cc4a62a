import WaymarkCore
import WaymarkJSON

/// The payload of a device's Home Assistant state topic: `state` is the sensor's value (the
/// current region's name, `not_home` outside every region) and `attributes` its attributes.
///
/// ```json
/// {"state":"Hall A","attributes":{"region":"hall-a","region_name":"Hall A","floor":0,"distance_m":1.8,
///  "proximity":"near","confidence":0.93,"recorded_region":"lobby"}}
/// ```
///
/// Distances are rounded to 0.1 m and the confidence to 0.01, so that noise below what the
/// estimates can tell apart does not update Home Assistant every second.
public enum HomeAssistantDeviceState {
    /// What Home Assistant's device trackers call "in no zone".
    public static let notHome = "not_home"

    public static func payload(_ s: AggregatorDeviceState, site: Site) -> [UInt8] {
        let regionID = s.currentRegion
        let region = regionID.flatMap { site.region($0) }
        let reading = regionID.flatMap { s.regions[$0] }
        let name: String? = regionID.map { region?.name ?? $0 }
        let value = JSONValue.object([
            ("state", .string(name ?? notHome)),
            ("attributes", .object([
                ("region", regionID.map(JSONValue.string) ?? .null),
                ("region_name", name.map(JSONValue.string) ?? .null),
                ("floor", region.map { .int($0.floor) } ?? .null),
                ("distance_m", rounded(reading?.distanceM, 10)),
                ("proximity", (reading?.proximity).map(JSONValue.string) ?? .null),
                ("confidence", rounded(s.confidence, 100)),
                ("recorded_region", s.recordedRegion.map(JSONValue.string) ?? .null),
            ])),
        ])
        var out: [UInt8] = []
        value.render(into: &out)
        return out
    }

    private static func rounded(_ x: Double?, _ scale: Double) -> JSONValue {
        guard let x, x.isFinite else { return .null }
        return .double((x * scale).rounded() / scale)
    }
}
