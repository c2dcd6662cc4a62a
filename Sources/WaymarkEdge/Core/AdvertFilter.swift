import WaymarkAdvertising
import WaymarkCore
import WaymarkPrivacy

/// Decides which advertisers the gateway reports, from the site file's `tracking:` rules
/// (DESIGN.md §3). Pure: no I/O, no clock (the caller passes each report's time).
///
/// Order: a beacon id the rules track (iBeacon, Eddystone-UID, AltBeacon) → that id; else a stable
/// address the rules list → `mac:`; else, when the site enables pseudonymous tracking, a keyed
/// hash of the address (``Pseudonymizer``) → `anon:`; else dropped. Untracked addresses and ids
/// never leave this type.
public struct AdvertFilter: Sendable {
    /// Why a report was not tracked (the label of the `filtered` metric).
    public enum DropReason: String, Sendable, CaseIterable {
        /// A stable address or beacon id in no allow-list.
        case untracked
        /// A resolvable/non-resolvable private address, not tracked without pseudonymous mode.
        case randomAddress = "random_address"
        /// The controller gave no RSSI (127).
        case noRSSI = "no_rssi"
    }

    public enum Decision: Sendable, Equatable {
        case tracked(DeviceID, tx: Double?)
        /// An Eddystone-TLM frame from an address last seen with a tracked id.
        case telemetry(DeviceID, SightingBatch.Telemetry)
        case dropped(DropReason)
    }

    public let rules: TrackingRules
    private var pseudonymizer: Pseudonymizer?
    /// Stable address → its `mac:` id when listed, nil when not (decided once per address).
    private var addressDecisions: [UInt64: DeviceID?] = [:]
    /// Address → the tracked id it last advertised, for attaching TLM telemetry.
    private var lastIDByAddress: [UInt64: DeviceID] = [:]
    /// Device id text (sightings JSONL) → whether tracked.
    private var idDecisions: [DeviceID: Bool] = [:]

    /// - Parameter secret: the pseudonym secret (overrides the site file's); required when the
    ///   rules enable pseudonymous tracking (the config loader checks this).
    public init(rules: TrackingRules, secret: String? = nil) {
        self.rules = rules
        if rules.pseudonymous, let s = secret ?? rules.pseudonymSecret { pseudonymizer = Pseudonymizer(secret: s) }
    }

    /// Classifies one advertising report heard at Unix time `time`.
    public mutating func classify(_ report: AdvertisingReport, time: Double) -> Decision {
        guard report.rssi != nil else { return .dropped(.noRSSI) }
        let address = report.address.value
        let beacon = report.beacon
        if let beacon {
            switch beacon {
            case .iBeacon(let b) where rules.tracksIBeacon(uuid: b.uuid, major: b.major, minor: b.minor):
                return remember(address, beacon.deviceID!, tx: beacon.measuredPowerAt1m)
            case .eddystoneUID(let b) where rules.tracksEddystone(namespace: b.namespace, instance: b.instance):
                return remember(address, beacon.deviceID!, tx: beacon.measuredPowerAt1m)
            case .altBeacon(let b) where rules.tracksAltBeacon(id1: b.id1, id2: b.id2, id3: b.id3):
                return remember(address, beacon.deviceID!, tx: beacon.measuredPowerAt1m)
            case .eddystoneTLM(let tlm):
                if let id = lastIDByAddress[address] {
                    return .telemetry(id, SightingBatch.Telemetry(
                        batteryMV: tlm.batteryMillivolts.map(Int.init), temperatureC: tlm.temperatureCelsius))
                }
            default:
                break
            }
        }
        let tx = beacon?.measuredPowerAt1m.map(Double.init)
        if report.address.kind.isStable {
            let decided: DeviceID?
            if let known = addressDecisions[address] {
                decided = known
            } else {
                let bytes = report.address.bytes
                decided = rules.tracksMAC(bytes) ? DeviceID.mac(bytes) : nil
                if addressDecisions.count > 50_000 { addressDecisions.removeAll(keepingCapacity: true) }
                addressDecisions[address] = decided
            }
            if let decided { return .tracked(decided, tx: tx) }
        }
        if pseudonymizer != nil {
            return .tracked(pseudonymizer!.pseudonym(address: address, time: time), tx: tx)
        }
        return .dropped(report.address.kind.isStable ? .untracked : .randomAddress)
    }

    /// Whether a device id from a sightings JSONL line is tracked. `anon:` ids (already hashed
    /// upstream) pass only in pseudonymous mode.
    public mutating func tracks(_ device: DeviceID) -> Bool {
        if let known = idDecisions[device] { return known }
        let parts = device.rawValue.split(separator: ":").map(String.init)
        let tracked: Bool
        switch device.kind {
        case .ibeacon:
            tracked = BeaconUUID(parts[1]).map { rules.tracksIBeacon(uuid: $0, major: UInt16(parts[2])!, minor: UInt16(parts[3])!) } ?? false
        case .eddystone:
            tracked = rules.tracksEddystone(namespace: Hex.decode(parts[1]) ?? [], instance: Hex.decode(parts[2]) ?? [])
        case .altbeacon:
            let id1 = BeaconUUID(parts[1]).map { Array($0.bytes) } ?? Hex.decode(parts[1]) ?? []
            tracked = rules.tracksAltBeacon(id1: id1, id2: UInt16(parts[2])!, id3: UInt16(parts[3])!)
        case .mac:
            tracked = DeviceID.parseMAC(parts[1]).map { rules.tracksMAC($0) } ?? false
        case .anon:
            tracked = rules.pseudonymous
        }
        if idDecisions.count > 50_000 { idDecisions.removeAll(keepingCapacity: true) }
        idDecisions[device] = tracked
        return tracked
    }

    private mutating func remember(_ address: UInt64, _ id: DeviceID, tx: Int?) -> Decision {
        if lastIDByAddress[address] != id {
            if lastIDByAddress.count > 50_000 { lastIDByAddress.removeAll(keepingCapacity: true) }
            lastIDByAddress[address] = id
        }
        return .tracked(id, tx: tx.map(Double.init))
    }
}
