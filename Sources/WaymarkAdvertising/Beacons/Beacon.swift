public import WaymarkCore

/// A beacon frame recognised in advertising data.
public enum Beacon: Hashable, Sendable {
    case iBeacon(IBeacon)
    case eddystoneUID(EddystoneUID)
    case eddystoneURL(EddystoneURL)
    case eddystoneTLM(EddystoneTLM)
    case eddystoneEncryptedTLM(EddystoneEncryptedTLM)
    case eddystoneEID(EddystoneEID)
    case altBeacon(AltBeacon)

    /// The format name used in JSON output: `ibeacon`, `eddystone-uid`, `eddystone-url`,
    /// `eddystone-tlm`, `eddystone-etlm`, `eddystone-eid` or `altbeacon`.
    public var format: String {
        switch self {
        case .iBeacon: "ibeacon"
        case .eddystoneUID: "eddystone-uid"
        case .eddystoneURL: "eddystone-url"
        case .eddystoneTLM: "eddystone-tlm"
        case .eddystoneEncryptedTLM: "eddystone-etlm"
        case .eddystoneEID: "eddystone-eid"
        case .altBeacon: "altbeacon"
        }
    }

    /// The stable device id the frame carries: iBeacon, Eddystone UID and AltBeacon only (URL is
    /// not unique, EID rotates, TLM carries no id).
    public var deviceID: DeviceID? {
        switch self {
        case .iBeacon(let b): .ibeacon(uuid: b.uuid, major: b.major, minor: b.minor)
        case .eddystoneUID(let b): .eddystone(namespace: b.namespace, instance: b.instance)
        case .altBeacon(let b): .altbeacon(id1: b.id1, id2: b.id2, id3: b.id3)
        default: nil
        }
    }

    /// The expected RSSI at 1 m in dBm, for distance estimates: the iBeacon measured power byte,
    /// the AltBeacon reference RSSI, or an Eddystone frame's tx power at 0 m minus 41 dB.
    public var measuredPowerAt1m: Int? {
        switch self {
        case .iBeacon(let b): Int(b.measuredPower)
        case .altBeacon(let b): Int(b.referenceRSSI)
        case .eddystoneUID(let b): Int(b.txPowerAt0m) - 41
        case .eddystoneURL(let b): Int(b.txPowerAt0m) - 41
        case .eddystoneEID(let b): Int(b.txPowerAt0m) - 41
        case .eddystoneTLM, .eddystoneEncryptedTLM: nil
        }
    }
}

/// Apple iBeacon: manufacturer data of company 0x004C starting `02 15`.
public struct IBeacon: Hashable, Sendable {
    public var uuid: BeaconUUID
    public var major: UInt16
    public var minor: UInt16
    /// Calibrated RSSI at 1 m, dBm.
    public var measuredPower: Int8

    public init(uuid: BeaconUUID, major: UInt16, minor: UInt16, measuredPower: Int8) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.measuredPower = measuredPower
    }
}

/// AltBeacon: manufacturer data (any company) starting with the beacon code `BE AC`.
public struct AltBeacon: Hashable, Sendable {
    /// The company id of the manufacturer data that carried the frame.
    public var companyID: UInt16
    /// The 16-byte organisational unit id.
    public var id1: [UInt8]
    public var id2: UInt16
    public var id3: UInt16
    /// Average RSSI at 1 m, dBm.
    public var referenceRSSI: Int8
    /// The manufacturer-reserved byte.
    public var manufacturerReserved: UInt8

    public init(companyID: UInt16, id1: [UInt8], id2: UInt16, id3: UInt16, referenceRSSI: Int8, manufacturerReserved: UInt8) {
        self.companyID = companyID
        self.id1 = id1
        self.id2 = id2
        self.id3 = id3
        self.referenceRSSI = referenceRSSI
        self.manufacturerReserved = manufacturerReserved
    }
}

/// Eddystone-UID (frame 0x00).
public struct EddystoneUID: Hashable, Sendable {
    /// Calibrated tx power at 0 m, dBm.
    public var txPowerAt0m: Int8
    /// 10-byte namespace.
    public var namespace: [UInt8]
    /// 6-byte instance.
    public var instance: [UInt8]

    public init(txPowerAt0m: Int8, namespace: [UInt8], instance: [UInt8]) {
        self.txPowerAt0m = txPowerAt0m
        self.namespace = namespace
        self.instance = instance
    }
}

/// Eddystone-URL (frame 0x10) with its URL expanded.
public struct EddystoneURL: Hashable, Sendable {
    public var txPowerAt0m: Int8
    public var url: String

    public init(txPowerAt0m: Int8, url: String) {
        self.txPowerAt0m = txPowerAt0m
        self.url = url
    }
}

/// Unencrypted Eddystone-TLM (frame 0x20, version 0).
public struct EddystoneTLM: Hashable, Sendable {
    /// Battery voltage in mV; nil when the beacon reports 0 (not supported).
    public var batteryMillivolts: UInt16?
    /// Temperature in °C (signed 8.8 fixed point on the air); nil when the beacon sends 0x8000.
    public var temperatureCelsius: Double?
    /// Advertising PDUs sent since power-up or reboot.
    public var advertisingCount: UInt32
    /// Time since power-up or reboot in seconds (sent in 0.1 s units).
    public var uptimeSeconds: Double

    public init(batteryMillivolts: UInt16?, temperatureCelsius: Double?, advertisingCount: UInt32, uptimeSeconds: Double) {
        self.batteryMillivolts = batteryMillivolts
        self.temperatureCelsius = temperatureCelsius
        self.advertisingCount = advertisingCount
        self.uptimeSeconds = uptimeSeconds
    }
}

/// Encrypted Eddystone-TLM (frame 0x20, version 1): recognised, not decrypted.
public struct EddystoneEncryptedTLM: Hashable, Sendable {
    /// The 12 encrypted telemetry bytes.
    public var encrypted: [UInt8]
    public var salt: UInt16
    /// Message integrity check.
    public var mic: UInt16

    public init(encrypted: [UInt8], salt: UInt16, mic: UInt16) {
        self.encrypted = encrypted
        self.salt = salt
        self.mic = mic
    }
}

/// Eddystone-EID (frame 0x30).
public struct EddystoneEID: Hashable, Sendable {
    public var txPowerAt0m: Int8
    /// The 8-byte ephemeral id.
    public var eid: [UInt8]

    public init(txPowerAt0m: Int8, eid: [UInt8]) {
        self.txPowerAt0m = txPowerAt0m
        self.eid = eid
    }
}
