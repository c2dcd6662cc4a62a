public import WaymarkCore

/// One RSSI reading of a device by a gateway, interned for the engine's hot path.
///
/// Rejected (and counted in `FusionCounters`): RSSI that is positive, below −127 dBm or not
/// finite; measured power (`tx`, or the site default) outside −100…+20 dBm; an unknown gateway.
public struct Observation: Sendable, Hashable {
    public var device: DeviceHandle
    /// Index into `Site.gateways` (`Site.gatewayIndex(_:)`).
    public var gateway: Int
    /// Time of the reading, Unix seconds.
    public var time: Double
    /// RSSI as received (dBm), before the gateway's `rssi_offset_db`.
    public var rssi: Double
    /// Advertised measured power at 1 m (dBm); nil for the site default.
    public var tx: Double?
    /// How many adverts this reading stands for (a window mean of n adverts weighs n).
    public var weight: Double

    public init(device: DeviceHandle, gateway: Int, time: Double, rssi: Double, tx: Double? = nil, weight: Double = 1) {
        self.device = device
        self.gateway = gateway
        self.time = time
        self.rssi = rssi
        self.tx = tx
        self.weight = weight
    }

    /// One entry of a gateway's window batch (`SightingBatch.Entry`) as one reading: the window's
    /// mean RSSI at the time of the last advert, weighted by the number of adverts it averages.
    /// From the entry's fields, so that a caller reading them from the batch copies no entry.
    public init(device: DeviceHandle, gateway: Int, windowLast last: Double, rssiMean: Double, tx: Double?, count: Int) {
        self.init(device: device, gateway: gateway, time: last, rssi: rssiMean, tx: tx, weight: Double(max(1, count)))
    }
}

extension FusionEngine {
    /// Applies one replay record, interning its device and gateway (a gateway not in the site
    /// is counted in `counters.unknownGateway`).
    public mutating func ingest(_ record: SightingRecord, into out: inout [FusionOutput]) {
        guard let g = site.gatewayIndex(record.gateway) else { counters.unknownGateway += 1; return }
        let device = handle(for: record.device)
        ingest(Observation(device: device, gateway: g, time: record.time, rssi: record.rssi, tx: record.tx), into: &out)
    }

    /// Applies one replay record.
    public mutating func ingest(_ record: SightingRecord) -> [FusionOutput] {
        var out: [FusionOutput] = []
        ingest(record, into: &out)
        return out
    }
}
