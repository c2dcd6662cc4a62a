import WaymarkCore
import WaymarkPrivacy

/// Turns a ``ForeignReport`` into a Waymark device id under the site's `tracking:` rules, exactly as
/// `waymark-edge` does for what its own radio hears (DESIGN.md §3): a beacon identity an allow-list
/// tracks → `ibeacon:`/`eddystone:`/`altbeacon:`; else a stable address `tracking.macs` lists →
/// `mac:`; else, when the site enables pseudonymous tracking, a keyed hash → `anon:` (of the
/// address, so a device heard by a Waymark gateway and by a foreign one gets the same pseudonym;
/// of the ESPresense id when the receiver gives no address but an id that names one device); else
/// dropped. Untracked identities never leave this type.
public struct ForeignIdentityMapper: Sendable {
    /// Why a report was not tracked (the `reason` label of `waymark_bridge_filtered_total`).
    public enum DropReason: String, Sendable, CaseIterable {
        /// A beacon id or stable address in no allow-list.
        case untracked
        /// An address that may rotate, not tracked without pseudonymous mode.
        case randomAddress = "random_address"
        /// An ESPresense id that names a class of devices (`apple:1005:9-26`, `md:…`): not an
        /// identity (tracked only in pseudonymous mode, by its address).
        case notUnique = "not_unique"
    }

    public enum Decision: Sendable, Equatable {
        case tracked(DeviceID)
        case dropped(DropReason)
    }

    public let rules: TrackingRules
    private var pseudonymizer: Pseudonymizer?

    /// - Parameter secret: overrides the site file's `tracking.pseudonym_secret`.
    public init(rules: TrackingRules, secret: String? = nil) {
        self.rules = rules
        if rules.pseudonymous, let s = secret ?? rules.pseudonymSecret { pseudonymizer = Pseudonymizer(secret: s) }
    }

    /// The device id of `report` heard at Unix time `time`, or why it is dropped.
    public mutating func map(_ report: ForeignReport, time: Double) -> Decision {
        if let beacon = report.beacon, let id = trackedBeacon(beacon) { return .tracked(id) }
        if let address = report.address, report.addressIsStable != false, rules.tracksMAC(address) {
            return .tracked(.mac(address))
        }
        if pseudonymizer != nil {
            // An ESPresense id that names one device outlives a rotating address (an `irk:` id);
            // otherwise the address, as the edge hashes it.
            let preferFingerprint = report.addressIsStable == false && report.fingerprintIsUnique && report.fingerprint != nil
            if let address = report.address, !preferFingerprint {
                let value = address.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                return .tracked(pseudonymizer!.pseudonym(address: value, time: time))
            }
            if let fingerprint = report.fingerprint, report.fingerprintIsUnique {
                return .tracked(pseudonymizer!.pseudonym(identifier: Array(("espresense:" + fingerprint).utf8), time: time))
            }
        }
        if report.format == .espresense, report.beacon == nil, !report.fingerprintIsUnique { return .dropped(.notUnique) }
        if report.beacon == nil, report.address != nil, report.addressIsStable == false { return .dropped(.randomAddress) }
        return .dropped(.untracked)
    }

    private func trackedBeacon(_ beacon: ForeignReport.BeaconID) -> DeviceID? {
        switch beacon {
        case .iBeacon(let uuid, let major, let minor):
            rules.tracksIBeacon(uuid: uuid, major: major, minor: minor) ? .ibeacon(uuid: uuid, major: major, minor: minor) : nil
        case .eddystone(let namespace, let instance):
            rules.tracksEddystone(namespace: namespace, instance: instance) ? .eddystone(namespace: namespace, instance: instance) : nil
        case .altBeacon(let id1, let id2, let id3):
            rules.tracksAltBeacon(id1: id1, id2: id2, id3: id3) ? .altbeacon(id1: id1, id2: id2, id3: id3) : nil
        }
    }
}
