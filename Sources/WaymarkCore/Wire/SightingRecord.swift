/// One line of the sightings JSONL replay format (DESIGN.md §4): one RSSI observation of a device
/// by a gateway.
///
/// `{"t": 1581249601.41, "gateway": "gw-lobby", "device": "mac:e7-8f-13-56-24-ce", "rssi": -77, "tx": -59}`
///
/// `t` is Unix seconds (an ISO-8601 string is accepted too); `tx` is the advertised measured power
/// at 1 m and is optional.
public struct SightingRecord: Hashable, Sendable {
    public var time: Double
    public var gateway: String
    public var device: DeviceID
    public var rssi: Double
    public var tx: Double?

    public init(time: Double, gateway: String, device: DeviceID, rssi: Double, tx: Double? = nil) {
        self.time = time
        self.gateway = gateway
        self.device = device
        self.rssi = rssi
        self.tx = tx
    }
}
