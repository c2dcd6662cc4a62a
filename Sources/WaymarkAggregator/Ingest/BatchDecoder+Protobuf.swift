import SwiftProtobuf
import WaymarkCore
import WaymarkProtobuf

/// The protobuf form of a batch (proto/waymark_batch.proto), held to the rules of the JSON form:
/// the same `FieldRules`, the same reasons for the same faults, the same `SightingBatch` for the
/// same batch (`ProtobufBatchTests`). A field that proto3 leaves out when it holds its zero value
/// is judged as JSON holding that value; the `optional` fields that JSON requires must be present.
/// The sightings are checked before the batch's own fields, in the order the JSON decoder meets
/// them, so a batch with several faults gets the same reason in both forms. Failure messages never
/// quote a device id (personal data).
extension BatchDecoder {
    /// Unknown fields (a newer edge's) are skipped, not kept.
    static let protobufOptions: BinaryDecodingOptions = {
        var options = BinaryDecodingOptions()
        options.discardUnknownFields = true
        return options
    }()

    mutating func decodeProtobuf(_ payload: [UInt8]) throws(Failure) -> SightingBatch {
        let m: Waymark_V1_SightingBatch
        do {
            m = try Waymark_V1_SightingBatch(serializedBytes: payload, options: Self.protobufOptions)
        } catch BinaryDecodingError.invalidUTF8 {
            throw Failure(description: "protobuf batch: a text field is not valid UTF-8", reason: .badText)
        } catch {
            throw Failure(description: "not a JSON or protobuf batch (protobuf: \(error))", reason: .malformed)
        }
        var entries: [SightingBatch.Entry] = []
        entries.reserveCapacity(m.sightings.count)
        for (i, s) in m.sightings.enumerated() { entries.append(try entry(s, i)) }
        // Written last: absent or different when the payload was cut short at an entry boundary.
        guard m.hasSightingCount, Int(m.sightingCount) == m.sightings.count else {
            throw Self.protobufFail("field 'sighting_count' missing or not the number of sightings (\(m.sightings.count)): cut short?")
        }
        if let r = FieldRules.checkText(m.boot) {
            throw Self.protobufFail("field 'boot' is empty, longer than \(FieldRules.maxTextBytes) bytes or holds control characters", r)
        }
        guard Double(m.seq) < 9.007e15 else { throw Self.protobufFail("field 'seq' \(m.seq) is not an integer in 0…2^53", .outOfRange) }
        guard m.hasStart, m.hasEnd else { throw Self.protobufFail("fields 'start' and 'end' (window, Unix seconds) are required") }
        var batch = SightingBatch(gateway: m.gateway, boot: m.boot, seq: m.seq, start: m.start, end: m.end, sightings: entries)
        batch.v = Int(m.v)
        return batch
    }

    private mutating func entry(_ s: Waymark_V1_Sighting, _ i: Int) throws(Failure) -> SightingBatch.Entry {
        let device = try protobufDevice(s.device, i)
        guard s.count >= 1, s.count < 1_000_000_000 else {
            throw Self.protobufFail("sighting \(i): 'count' \(s.count) is not an integer in 1…999999999", .outOfRange)
        }
        guard s.hasRssiMax, s.hasRssiMean, s.hasRssiLast else {
            throw Self.protobufFail("sighting \(i) needs 'rssi_max', 'rssi_mean' and 'rssi_last'")
        }
        if !FieldRules.isDBm(s.rssiMax) || !FieldRules.isDBm(s.rssiMean) || !FieldRules.isDBm(s.rssiLast) {
            throw Self.protobufFail("sighting \(i): RSSI (rssi_max \(s.rssiMax), rssi_mean \(s.rssiMean), rssi_last \(s.rssiLast)) outside \(FieldRules.dBmRange) dBm", .outOfRange)
        }
        let tx: Double? = s.hasTx ? s.tx : nil
        if let tx, !FieldRules.isDBm(tx) {
            throw Self.protobufFail("sighting \(i): 'tx' \(tx) outside \(FieldRules.dBmRange) dBm", .outOfRange)
        }
        guard s.hasFirst, s.hasLast else { throw Self.protobufFail("sighting \(i) needs 'first' and 'last' (Unix seconds)") }
        var telemetry: SightingBatch.Telemetry?
        if s.hasTelemetry {
            let t = s.telemetry
            if t.hasBatteryMv, t.batteryMv > 65_535 {
                throw Self.protobufFail("sighting \(i): telemetry 'battery_mv' \(t.batteryMv) is not an integer in \(FieldRules.batteryRange)", .outOfRange)
            }
            if t.hasTemperatureC, FieldRules.checkNumber(t.temperatureC, in: FieldRules.temperatureRange) != nil {
                throw Self.protobufFail("sighting \(i): telemetry 'temperature_c' \(t.temperatureC) outside \(FieldRules.temperatureRange)", .outOfRange)
            }
            telemetry = SightingBatch.Telemetry(batteryMV: t.hasBatteryMv ? Int(t.batteryMv) : nil,
                                                temperatureC: t.hasTemperatureC ? t.temperatureC : nil)
        }
        return SightingBatch.Entry(device: device, count: Int(s.count), rssiMax: s.rssiMax, rssiMean: s.rssiMean, rssiLast: s.rssiLast,
                                   tx: tx, first: s.first, last: s.last, telemetry: telemetry)
    }

    /// The device id of sighting `i`, validated once per distinct text (the JSON decoder's cache).
    private mutating func protobufDevice(_ text: String, _ i: Int) throws(Failure) -> DeviceID {
        if let id = deviceCache[text] { return id }
        guard text.utf8.count <= FieldRules.maxDeviceIDBytes else {
            throw Self.protobufFail("sighting \(i): device id longer than \(FieldRules.maxDeviceIDBytes) bytes", .badText)
        }
        guard let id = DeviceID(text) else { throw Self.protobufFail("sighting \(i): 'device' is not a device id") }
        if deviceCache.count >= cacheLimit { deviceCache.removeAll(keepingCapacity: true) }
        deviceCache[text] = id
        return id
    }

    static func protobufFail(_ what: String, _ reason: RejectReason = .malformed) -> Failure {
        Failure(description: "protobuf batch: \(what)", reason: reason)
    }
}
