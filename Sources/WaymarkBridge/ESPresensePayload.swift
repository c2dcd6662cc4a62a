import WaymarkCore
import WaymarkJSON

/// Reads an ESPresense device message (`espresense/devices/<id>/<room>`), as documented by the
/// ESPresense project: a JSON object with `id`, `mac` (12 hex digits), `idType`, `rssi@1m`, `rssi`,
/// `raw`, `distance` and more. Waymark uses `rssi` (the reading), `rssi@1m` (the node's expected
/// RSSI at 1 m for this device, its receiver adjustment included), the id and the address; it
/// ignores ESPresense's own `distance` and computes its own from the RSSI.
public enum ESPresensePayload {
    /// `idType` of a public address, a static random address and a configured known address.
    static let stableAddressTypes: Set<Double> = [55, 5, 210]
    /// `idType` of an alias the user configured for a device (ESPresense's device settings).
    static let aliasIDType = 250.0

    /// Parses `payload`; `topicID` is the id level of the topic, used when the payload has no `id`.
    public static func parse(_ payload: [UInt8], topicID: String) throws(ForeignMessageError) -> ForeignReport {
        let parsed: Result<ForeignReport, ForeignMessageError> = payload.withUnsafeBufferPointer { bytes in
            let index: JSONObjectIndex
            do { index = try JSONObjectIndex(bytes) } catch {
                return .failure(.init(.malformed, "ESPresense message is not a JSON object (\(error))"))
            }
            guard let rssi = index.number("rssi") else {
                return .failure(.init(.malformed, "ESPresense message without a numeric 'rssi'; is the node's firmware an ESPresense release?"))
            }
            let id = index.string("id") ?? topicID
            let mac = index.string("mac").flatMap(Self.address)
            let idType = index.number("idType")
            var report = ForeignReport(format: .espresense, rssi: rssi, measuredPower: index.number("rssi@1m"),
                                       beacon: Self.beacon(id), address: mac, fingerprint: id)
            // The id is the address itself (public or static random; ESPresense reports rotating
            // random addresses only under other ids) or a configured known address.
            let bareAddress = Self.address(id) ?? (id.hasPrefix("known:") ? Self.address(String(id.dropFirst(6))) : nil)
            if let bareAddress {
                report.address = bareAddress
                report.addressIsStable = idType.map { stableAddressTypes.contains($0) } ?? true
            } else if mac != nil {
                report.addressIsStable = idType.map { stableAddressTypes.contains($0) }
            }
            report.fingerprintIsUnique = Self.namesOneDevice(id, mac: mac, idType: idType) || bareAddress != nil
            return .success(report)
        }
        return try parsed.get()
    }

    /// Whether an ESPresense id names one device: a resolved identity (`irk:<key>`), a configured
    /// address (`known:<mac>`) or alias, or a type prefix with the device's own address
    /// (`tile:<mac>`, `flora:<mac>`, …). Ids built from what many devices advertise alike
    /// (`apple:1005:9-26`, `md:…`, `name:…`, `msft:cdp:…`) do not.
    static func namesOneDevice(_ id: String, mac: [UInt8]?, idType: Double?) -> Bool {
        if id.hasPrefix("irk:") || id.hasPrefix("known:") || idType == aliasIDType { return true }
        if let mac, let colon = id.lastIndex(of: ":"), Self.address(String(id[id.index(after: colon)...])) == mac { return true }
        return false
    }

    /// `aabbccddeeff` (ESPresense writes addresses as 12 hex digits, most significant byte first).
    static func address(_ text: String) -> [UInt8]? {
        guard text.utf8.count == 12, let bytes = Hex.decode(text), bytes.count == 6 else { return nil }
        return bytes
    }

    /// The beacon identity in an ESPresense id: `iBeacon:<uuid>-<major>-<minor>`,
    /// `altBeacon:<uuid>-<id2>-<id3>` or `eddy:<namespace>-<instance>`.
    static func beacon(_ id: String) -> ForeignReport.BeaconID? {
        if let rest = strip(id, "iBeacon:"), let (uuid, a, b) = uuidAndTwoNumbers(rest) {
            return .iBeacon(uuid: uuid, major: a, minor: b)
        }
        if let rest = strip(id, "altBeacon:"), let (uuid, a, b) = uuidAndTwoNumbers(rest) {
            return .altBeacon(id1: uuid.bytes, id2: a, id3: b)
        }
        if let rest = strip(id, "eddy:") {
            let parts = rest.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0].utf8.count == 20, parts[1].utf8.count == 12,
                  let ns = Hex.decode(parts[0]), let inst = Hex.decode(parts[1]) else { return nil }
            return .eddystone(namespace: ns, instance: inst)
        }
        return nil
    }

    private static func strip(_ id: String, _ prefix: String) -> String? {
        id.lowercased().hasPrefix(prefix.lowercased()) ? String(id.dropFirst(prefix.count)) : nil
    }

    /// `<uuid 8-4-4-4-12>-<u16>-<u16>`.
    private static func uuidAndTwoNumbers(_ text: String) -> (BeaconUUID, UInt16, UInt16)? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 7, let a = UInt16(parts[5]), let b = UInt16(parts[6]),
              let uuid = BeaconUUID(parts[0..<5].joined(separator: "-")) else { return nil }
        return (uuid, a, b)
    }
}
