import WaymarkCore

/// Decodes `SightingBatch` JSON (DESIGN.md §4) straight from the MQTT payload bytes.
///
/// Faster than `JSONDecoder` by reading the known members in place; unknown members are skipped
/// (a newer edge may add some), missing required members and wrong types are errors that name
/// the member. Device ids are validated once per distinct id (cached).
struct BatchDecoder {
    struct Failure: Error, CustomStringConvertible {
        var description: String
        /// Why the batch is rejected (`RejectReason.malformed`, `.badText` or `.outOfRange`).
        var reason: RejectReason = .malformed
    }

    /// Valid device ids seen so far, by their text. Bounded: cleared when it grows past `cacheLimit`.
    private var deviceCache: [String: DeviceID] = [:]
    private let cacheLimit = 1_000_000

    mutating func decode(_ payload: [UInt8]) throws(Failure) -> SightingBatch {
        do {
            return try payload.withUnsafeBufferPointer { (buffer) throws(JSONCursor.Failure) -> SightingBatch in
                var c = JSONCursor(buffer)
                let batch = try decodeBatch(&c)
                c.skipSpace()
                guard c.i == buffer.count else { throw c.fail("unexpected data after the batch object") }
                return batch
            }
        } catch {
            throw Failure(description: error.description, reason: error.reason)
        }
    }

    private mutating func decodeBatch(_ c: inout JSONCursor) throws(JSONCursor.Failure) -> SightingBatch {
        var v: Int?, gateway: String?, boot: String?, seq: Double?, start: Double?, end: Double?
        var entries: [SightingBatch.Entry]?
        try c.expect(0x7B)
        if !c.consume(0x7D) {
            repeat {
                let k = try c.key()
                if JSONCursor.equals(k, "v") { v = Int(exactly: try c.number()) }
                else if JSONCursor.equals(k, "gateway") { gateway = try c.string() }
                else if JSONCursor.equals(k, "boot") { boot = try c.string() }
                else if JSONCursor.equals(k, "seq") { seq = try c.number() }
                else if JSONCursor.equals(k, "start") { start = try c.number() }
                else if JSONCursor.equals(k, "end") { end = try c.number() }
                else if JSONCursor.equals(k, "sightings") { entries = try decodeEntries(&c) }
                else { try c.skipValue() }
            } while c.consume(0x2C)
            try c.expect(0x7D)
        }
        guard let v else { throw c.fail("member 'v' (schema version) missing or not an integer") }
        guard let gateway else { throw c.fail("member 'gateway' missing") }
        guard let boot else { throw c.fail("member 'boot' missing") }
        if let r = FieldRules.checkText(boot) { throw c.fail("member 'boot' is empty, longer than \(FieldRules.maxTextBytes) bytes or holds control characters", r) }
        guard let seq else { throw c.fail("member 'seq' missing") }
        guard seq >= 0, seq < 9.007e15, seq == seq.rounded() else { throw c.fail("member 'seq' \(seq) is not an integer in 0…2^53", .outOfRange) }
        guard let start, let end else { throw c.fail("members 'start' and 'end' (window, Unix seconds) are required") }
        guard let entries else { throw c.fail("member 'sightings' missing") }
        var batch = SightingBatch(gateway: gateway, boot: boot, seq: UInt64(seq), start: start, end: end, sightings: entries)
        batch.v = v
        return batch
    }

    private mutating func decodeEntries(_ c: inout JSONCursor) throws(JSONCursor.Failure) -> [SightingBatch.Entry] {
        var out: [SightingBatch.Entry] = []
        try c.expect(0x5B)
        if c.consume(0x5D) { return out }
        repeat { out.append(try decodeEntry(&c)) } while c.consume(0x2C)
        try c.expect(0x5D)
        return out
    }

    private mutating func decodeEntry(_ c: inout JSONCursor) throws(JSONCursor.Failure) -> SightingBatch.Entry {
        var device: DeviceID?
        var count: Double?, rssiMax: Double?, rssiMean: Double?, rssiLast: Double?, tx: Double?, first: Double?, last: Double?
        var telemetry: SightingBatch.Telemetry?
        try c.expect(0x7B)
        if !c.consume(0x7D) {
            repeat {
                let k = try c.key()
                if JSONCursor.equals(k, "device") { device = try deviceID(&c) }
                else if JSONCursor.equals(k, "count") { count = try c.number() }
                else if JSONCursor.equals(k, "rssi_max") { rssiMax = try c.number() }
                else if JSONCursor.equals(k, "rssi_mean") { rssiMean = try c.number() }
                else if JSONCursor.equals(k, "rssi_last") { rssiLast = try c.number() }
                else if JSONCursor.equals(k, "tx") { tx = c.null() ? nil : try c.number() }
                else if JSONCursor.equals(k, "first") { first = try c.number() }
                else if JSONCursor.equals(k, "last") { last = try c.number() }
                else if JSONCursor.equals(k, "telemetry") { telemetry = c.null() ? nil : try decodeTelemetry(&c) }
                else { try c.skipValue() }
            } while c.consume(0x2C)
            try c.expect(0x7D)
        }
        guard let device else { throw c.fail("sighting without 'device'") }
        guard let count else { throw c.fail("sighting without 'count'") }
        guard count >= 1, count < 1e9, count == count.rounded() else { throw c.fail("sighting 'count' \(count) is not an integer in 1…999999999", .outOfRange) }
        guard let rssiMax, let rssiMean, let rssiLast else { throw c.fail("sighting needs 'rssi_max', 'rssi_mean' and 'rssi_last'") }
        // Hot path: no array per entry.
        if !FieldRules.isDBm(rssiMax) || !FieldRules.isDBm(rssiMean) || !FieldRules.isDBm(rssiLast) {
            throw c.fail("sighting RSSI (rssi_max \(rssiMax), rssi_mean \(rssiMean), rssi_last \(rssiLast)) outside \(FieldRules.dBmRange) dBm", .outOfRange)
        }
        if let tx, !FieldRules.isDBm(tx) {
            throw c.fail("sighting 'tx' \(tx) outside \(FieldRules.dBmRange) dBm", .outOfRange)
        }
        guard let first, let last else { throw c.fail("sighting needs 'first' and 'last' (Unix seconds)") }
        return SightingBatch.Entry(device: device, count: Int(count), rssiMax: rssiMax, rssiMean: rssiMean, rssiLast: rssiLast,
                                   tx: tx, first: first, last: last, telemetry: telemetry)
    }

    private mutating func deviceID(_ c: inout JSONCursor) throws(JSONCursor.Failure) -> DeviceID {
        let text = try c.string()
        if let id = deviceCache[text] { return id }
        guard text.utf8.count <= FieldRules.maxDeviceIDBytes else {
            throw c.fail("device id longer than \(FieldRules.maxDeviceIDBytes) bytes", .badText)
        }
        guard let id = DeviceID(text) else { throw c.fail("'\(text.prefix(80))' is not a device id") }
        if deviceCache.count >= cacheLimit { deviceCache.removeAll(keepingCapacity: true) }
        deviceCache[text] = id
        return id
    }

    private mutating func decodeTelemetry(_ c: inout JSONCursor) throws(JSONCursor.Failure) -> SightingBatch.Telemetry {
        var battery: Double?, temperature: Double?
        try c.expect(0x7B)
        if !c.consume(0x7D) {
            repeat {
                let k = try c.key()
                if JSONCursor.equals(k, "battery_mv") { battery = c.null() ? nil : try c.number() }
                else if JSONCursor.equals(k, "temperature_c") { temperature = c.null() ? nil : try c.number() }
                else { try c.skipValue() }
            } while c.consume(0x2C)
            try c.expect(0x7D)
        }
        if let battery, FieldRules.checkNumber(battery, in: FieldRules.batteryRange, integer: true) != nil {
            throw c.fail("telemetry 'battery_mv' \(battery) is not an integer in \(FieldRules.batteryRange)", .outOfRange)
        }
        if let temperature, FieldRules.checkNumber(temperature, in: FieldRules.temperatureRange) != nil {
            throw c.fail("telemetry 'temperature_c' \(temperature) outside \(FieldRules.temperatureRange)", .outOfRange)
        }
        return SightingBatch.Telemetry(batteryMV: battery.map { Int($0) }, temperatureC: temperature)
    }
}
