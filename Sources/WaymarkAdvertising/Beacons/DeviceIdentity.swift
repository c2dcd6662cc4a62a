public import WaymarkCore

/// The identity under which the edge agent tracks the sender of a report, with the calibration
/// that turns its RSSI into a distance.
public struct DeviceIdentity: Hashable, Sendable {
    public var id: DeviceID
    /// Expected RSSI at 1 m in dBm from the advert itself (see `Beacon.measuredPowerAt1m`); nil
    /// when the advert does not say, so the site default applies.
    public var measuredPowerAt1m: Int?

    public init(id: DeviceID, measuredPowerAt1m: Int?) {
        self.id = id
        self.measuredPowerAt1m = measuredPowerAt1m
    }
}

extension AdvertisingReport {
    /// The device identity: the beacon id when the advert carries iBeacon, Eddystone-UID or
    /// AltBeacon, else `mac:` when the address is stable (public or static random, including
    /// controller-resolved identity addresses), else nil. For nil, `address.kind` says why
    /// (resolvable/non-resolvable private, anonymous); the edge decides whether to track such
    /// devices pseudonymously.
    public var identity: DeviceIdentity? {
        let beacon = adError == nil ? Beacon.detect(data.span) : nil
        if let beacon, let id = beacon.deviceID {
            return DeviceIdentity(id: id, measuredPowerAt1m: beacon.measuredPowerAt1m)
        }
        guard address.kind.isStable else { return nil }
        return DeviceIdentity(id: .mac(address.bytes), measuredPowerAt1m: beacon?.measuredPowerAt1m)
    }
}
