import WaymarkCore

/// One foreign receiver's report about one device, as read from one MQTT message and before the
/// site's tracking rules decide what it becomes.
///
/// ESPresense and Theengs/OpenMQTTGateway identify devices differently; both come down to the
/// beacon identity the advert carried (when it was a beacon), the advertiser's address (when the
/// receiver gives one) and, for ESPresense, its own fingerprint id.
public struct ForeignReport: Sendable, Equatable {
    /// The format that produced the report (the `source` label of the metrics).
    public enum Format: String, Sendable, CaseIterable {
        case espresense
        case theengs
    }

    /// A beacon identity carried by the advert.
    public enum BeaconID: Sendable, Equatable {
        case iBeacon(uuid: BeaconUUID, major: UInt16, minor: UInt16)
        case eddystone(namespace: [UInt8], instance: [UInt8])
        case altBeacon(id1: [UInt8], id2: UInt16, id3: UInt16)
    }

    public var format: Format
    /// RSSI as the receiver measured it (dBm).
    public var rssi: Double
    /// The receiver's expected RSSI at 1 m for this device (dBm), when it gives one that means
    /// that: ESPresense's `rssi@1m`, a beacon's measured power.
    public var measuredPower: Double?
    public var beacon: BeaconID?
    /// The advertiser's address, most significant byte first.
    public var address: [UInt8]?
    /// True when the receiver says the address is stable (public, static random, or resolved from
    /// a known identity); false when it may rotate; nil when it does not say.
    public var addressIsStable: Bool?
    /// ESPresense's id for the device (`iBeacon:…`, `irk:…`, `apple:1005:9-26`, …), nil for Theengs.
    public var fingerprint: String?
    /// Whether ``fingerprint`` names one device (`irk:…`, `known:…`, an alias, `tile:<address>`)
    /// rather than a class of devices (`apple:1005:9-26`, `md:…`).
    public var fingerprintIsUnique: Bool

    public init(format: Format, rssi: Double, measuredPower: Double? = nil, beacon: BeaconID? = nil,
                address: [UInt8]? = nil, addressIsStable: Bool? = nil, fingerprint: String? = nil,
                fingerprintIsUnique: Bool = false) {
        self.format = format
        self.rssi = rssi
        self.measuredPower = measuredPower
        self.beacon = beacon
        self.address = address
        self.addressIsStable = addressIsStable
        self.fingerprint = fingerprint
        self.fingerprintIsUnique = fingerprintIsUnique
    }
}

/// Why a message was not turned into a reading (the `reason` label of
/// `waymark_bridge_rejected_total`). Rejections are logged once per reason and receiver.
public enum ForeignRejection: String, Sendable, CaseIterable, Error {
    /// Not a JSON object, or a member missing or of the wrong type.
    case malformed
    /// Larger than the bridge accepts (64 kB).
    case oversize
    /// RSSI outside −127…0 dBm, or not finite.
    case implausibleRSSI = "implausible_rssi"
    /// A retained reading: its age is unknown, so it cannot be placed in a window.
    case retained
    /// A reading of a receiver no `foreign_gateways` entry maps.
    case unmapped
}

/// A rejection with the message the operator reads: which field, what was wrong, what to check.
public struct ForeignMessageError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: ForeignRejection
    public var message: String

    public init(_ reason: ForeignRejection, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { message }
}
