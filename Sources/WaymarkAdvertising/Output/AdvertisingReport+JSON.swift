public import WaymarkJSON
import WaymarkCore

/// The JSON shapes of `waymark decode` (field names fixed by issue 2; keys in stable order).
extension AdvertisingData {
    /// `{"flags":…, "local_name":…, "shortened_local_name":…, "tx_power":…, "service_uuids":[…],
    /// "service_data":[{"uuid","data"}], "manufacturer_data":[{"company_id","data"}],
    /// "other":[{"type","data"}]}`, each key present only when the advert has it.
    public var json: JSONValue {
        var flags: JSONValue?
        var name: JSONValue?
        var shortName: JSONValue?
        var tx: JSONValue?
        var uuids: [JSONValue] = []
        var service: [JSONValue] = []
        var manufacturer: [JSONValue] = []
        var other: [JSONValue] = []
        for s in structures {
            switch s {
            case .flags(let f): flags = flags ?? .int(Int(f))
            case .localName(let n, let complete):
                if complete { name = name ?? .string(n) } else { shortName = shortName ?? .string(n) }
            case .txPowerLevel(let t): tx = tx ?? .int(Int(t))
            case .serviceUUIDs(let list, _): uuids += list.map { .string($0.description) }
            case .serviceData(let d):
                service.append(.object([("uuid", .string(d.uuid.description)), ("data", .hex(d.data))]))
            case .manufacturerData(let m):
                manufacturer.append(.object([("company_id", .int(Int(m.companyID))), ("data", .hex(m.data))]))
            case .other(let type, let value):
                other.append(.object([("type", .int(Int(type))), ("data", .hex(value))]))
            }
        }
        var members: [(String, JSONValue)] = []
        if let flags { members.append(("flags", flags)) }
        if let name { members.append(("local_name", name)) }
        if let shortName { members.append(("shortened_local_name", shortName)) }
        if let tx { members.append(("tx_power", tx)) }
        if !uuids.isEmpty { members.append(("service_uuids", .array(uuids))) }
        if !service.isEmpty { members.append(("service_data", .array(service))) }
        if !manufacturer.isEmpty { members.append(("manufacturer_data", .array(manufacturer))) }
        if !other.isEmpty { members.append(("other", .array(other))) }
        return .object(members)
    }

    /// `{"ad": …, "beacon": … or null}`: the output for one `--ad` input.
    public var decodeJSON: JSONValue {
        .object([("ad", json), ("beacon", beacon?.json ?? .null)])
    }
}

extension Beacon {
    /// `{"format": …, fields in snake_case}`.
    public var json: JSONValue {
        var m: [(String, JSONValue)] = [("format", .string(format))]
        switch self {
        case .iBeacon(let b):
            m += [("uuid", .string(b.uuid.description)), ("major", .int(Int(b.major))),
                  ("minor", .int(Int(b.minor))), ("tx_power", .int(Int(b.measuredPower)))]
        case .eddystoneUID(let b):
            m += [("tx_power", .int(Int(b.txPowerAt0m))), ("namespace", .hex(b.namespace)),
                  ("instance", .hex(b.instance))]
        case .eddystoneURL(let b):
            m += [("tx_power", .int(Int(b.txPowerAt0m))), ("url", .string(b.url))]
        case .eddystoneTLM(let b):
            m += [("version", .int(0)), ("battery_mv", .int(b.batteryMillivolts)),
                  ("temperature_c", b.temperatureCelsius.map { .double($0) } ?? .null),
                  ("adv_count", .int(Int(b.advertisingCount))), ("uptime_s", .double(b.uptimeSeconds))]
        case .eddystoneEncryptedTLM(let b):
            m += [("version", .int(1)), ("etlm", .hex(b.encrypted)), ("salt", .int(Int(b.salt))),
                  ("mic", .int(Int(b.mic)))]
        case .eddystoneEID(let b):
            m += [("tx_power", .int(Int(b.txPowerAt0m))), ("eid", .hex(b.eid))]
        case .altBeacon(let b):
            let id1: JSONValue = BeaconUUIDText.of(b.id1).map { .string($0) } ?? .hex(b.id1)
            m += [("company_id", .int(Int(b.companyID))), ("id1", id1), ("id2", .int(Int(b.id2))),
                  ("id3", .int(Int(b.id3))), ("ref_rssi", .int(Int(b.referenceRSSI))),
                  ("mfg_reserved", .int(Int(b.manufacturerReserved)))]
        }
        return .object(m)
    }
}

extension AdvertisingReport {
    /// One element of `reports`: `event_type`, `address`, `address_type`, `address_kind`, `rssi`,
    /// `data`, `ad` (null with `ad_error` when malformed), `beacon`, `device_id`,
    /// `measured_power` and, for extended reports, `extended`.
    public var json: JSONValue {
        var m: [(String, JSONValue)] = [
            ("event_type", .int(Int(eventType))),
            ("address", .string(address.description)),
            ("address_type", .int(Int(address.type.rawValue))),
            ("address_kind", .string(address.kind.rawValue)),
            ("rssi", .int(rssi)),
            ("data", .hex(data)),
        ]
        if let ad {
            m += [("ad", ad.json), ("beacon", ad.beacon?.json ?? .null)]
        } else {
            m += [("ad", .null), ("ad_error", adError.map { DecodeOutput.error(code: $0.code, message: $0.message) } ?? .null),
                  ("beacon", .null)]
        }
        let id = identity
        m += [("device_id", id.map { .string($0.id.rawValue) } ?? .null),
              ("measured_power", .int(id?.measuredPowerAt1m))]
        if let e = extended {
            m.append(("extended", .object([
                ("primary_phy", .int(Int(e.primaryPHY))), ("secondary_phy", .int(Int(e.secondaryPHY))),
                ("sid", .int(Int(e.advertisingSID))), ("tx_power", .int(e.txPower)),
                ("periodic_interval", .int(Int(e.periodicAdvertisingInterval))),
                ("data_status", .int(Int(ExtendedAdvertisingInfo.dataStatus(eventType: eventType)))),
                ("direct_address", e.directAddress.map { .string($0.description) } ?? .null),
            ])))
        }
        return .object(m)
    }
}

enum BeaconUUIDText {
    static func of(_ bytes: [UInt8]) -> String? { BeaconUUID(bytes: bytes)?.description }
}
