import WaymarkAdvertising
import WaymarkCore
import WaymarkJSON

/// Reads a Theengs Gateway or OpenMQTTGateway BLE message (`<publish topic>/<address>`), as
/// documented by the Theengs projects: a JSON object with `id` (the advertiser's address,
/// `AA:BB:CC:DD:EE:FF`), `rssi`, and, when the Theengs decoder recognised the advert, `model_id`
/// and the decoded fields — for an iBeacon (`model_id` `IBEACON`) `uuid` (32 hex digits), `major`,
/// `minor` and `txpower` (its measured power at 1 m; `power` in older decoders). With "publish
/// advertising data" on, the raw `manufacturerdata` and `servicedata`/`servicedatauuid` (hex) come
/// too; Waymark decodes iBeacon, Eddystone-UID and AltBeacon frames from them itself.
///
/// OpenMQTTGateway's "use the beacon UUID as id" option puts the UUID in `id` and the address in
/// `mac`; both layouts are read.
public enum TheengsPayload {
    /// Parses `payload`; `topicLevel` is the last topic level (the address without colons), used
    /// when the payload carries no address.
    public static func parse(_ payload: [UInt8], topicLevel: String) throws(ForeignMessageError) -> ForeignReport {
        let parsed: Result<ForeignReport, ForeignMessageError> = payload.withUnsafeBufferPointer { bytes in
            let index: JSONObjectIndex
            do { index = try JSONObjectIndex(bytes) } catch {
                return .failure(.init(.malformed, "Theengs/OpenMQTTGateway message is not a JSON object (\(error))"))
            }
            guard let rssi = index.number("rssi") else {
                return .failure(.init(.malformed, "Theengs/OpenMQTTGateway message without a numeric 'rssi'"))
            }
            var report = ForeignReport(format: .theengs, rssi: rssi)
            report.address = index.string("id").flatMap(address) ?? index.string("mac").flatMap(address) ?? address(topicLevel)
            if let type = index.number("mac_type"), type == 0 { report.addressIsStable = true }
            if let decoded = decodedIBeacon(index) {
                report.beacon = decoded.id
                report.measuredPower = decoded.power
            } else if let frame = rawBeacon(index) {
                report.beacon = frame.id
                report.measuredPower = frame.power
            }
            return .success(report)
        }
        return try parsed.get()
    }

    /// `AA:BB:CC:DD:EE:FF`, `aa-bb-…` or 12 hex digits.
    static func address(_ text: String) -> [UInt8]? {
        let n = text.utf8.count
        guard n == 12 || n == 17, let bytes = Hex.decode(text), bytes.count == 6 else { return nil }
        return bytes
    }

    /// The Theengs decoder's iBeacon fields.
    static func decodedIBeacon(_ index: JSONObjectIndex) -> (id: ForeignReport.BeaconID, power: Double?)? {
        let model = index.string("model_id")?.uppercased()
        guard model == "IBEACON" || (model == nil && index.string("mfid") == "4c00"),
              let uuidText = index.string("uuid"), let uuidBytes = Hex.decode(uuidText), let uuid = BeaconUUID(bytes: uuidBytes),
              let major = index.number("major").flatMap(UInt16.init(exactly:)),
              let minor = index.number("minor").flatMap(UInt16.init(exactly:)) else { return nil }
        return (.iBeacon(uuid: uuid, major: major, minor: minor), index.number("txpower") ?? index.number("power"))
    }

    /// A beacon frame in the raw `manufacturerdata` (company id little-endian first, as Theengs
    /// writes it) or `servicedata` with its 16-bit `servicedatauuid`.
    static func rawBeacon(_ index: JSONObjectIndex) -> (id: ForeignReport.BeaconID, power: Double?)? {
        var ad: [UInt8] = []
        if let hex = index.string("manufacturerdata"), let data = Hex.decode(hex), data.count >= 2, data.count <= 253 {
            ad += [UInt8(data.count + 1), 0xFF] + data
        }
        if let hex = index.string("servicedata"), let data = Hex.decode(hex), data.count <= 251,
           let uuidText = index.string("servicedatauuid"), let uuid = Hex.decode(uuidText), uuid.count == 2 {
            ad += [UInt8(data.count + 3), 0x16, uuid[1], uuid[0]] + data
        }
        guard !ad.isEmpty, let frame = Beacon.detect(ad.span) else { return nil }
        let power = frame.measuredPowerAt1m.map(Double.init)
        switch frame {
        case .iBeacon(let b): return (.iBeacon(uuid: b.uuid, major: b.major, minor: b.minor), power)
        case .eddystoneUID(let b): return (.eddystone(namespace: b.namespace, instance: b.instance), power)
        case .altBeacon(let b): return (.altBeacon(id1: b.id1, id2: b.id2, id3: b.id3), power)
        default: return nil
        }
    }
}
