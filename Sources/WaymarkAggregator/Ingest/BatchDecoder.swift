import WaymarkCore
import WaymarkJSON

/// Decodes a `SightingBatch` straight from the MQTT payload bytes, in either encoding of
/// `BatchEncoding`: JSON (DESIGN.md §4) when the payload starts with `{` or JSON whitespace,
/// protocol buffers (proto/waymark_batch.proto, `BatchDecoder+Protobuf.swift`) otherwise. Both are
/// held to the same field rules and give the same rejection reasons for the same faults.
///
/// JSON: several times faster than `JSONDecoder` (see `waymark-bench aggregator`) by reading the known
/// members in place with `JSONReader`; unknown members are skipped but checked (a newer edge may
/// add some), missing required members and wrong types are errors that name the member. Keys and
/// the text members (`gateway`, `boot`, `device`) must be written without escapes, which no valid
/// value needs. Device ids are validated once per distinct id (cached).
/// `BatchDecoderAgreementTests` fuzzes it against `JSONSerialization`.
public struct BatchDecoder: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        /// Why the batch is rejected (`RejectReason.malformed`, `.badText` or `.outOfRange`).
        public var reason: RejectReason = .malformed
    }

    /// Valid device ids seen so far, by their text. Bounded: cleared when it grows past `cacheLimit`.
    var deviceCache: [String: DeviceID] = [:]
    let cacheLimit = 1_000_000

    public init() {}

    /// The batch in `payload`, JSON or protobuf (told apart by the first byte, `BatchEncoding.of`).
    public mutating func decode(_ payload: [UInt8]) throws(Failure) -> SightingBatch {
        switch BatchEncoding.of(payload) {
        case .json: try decodeJSON(payload)
        case .protobuf: try decodeProtobuf(payload)
        }
    }

    mutating func decodeJSON(_ payload: [UInt8]) throws(Failure) -> SightingBatch {
        try payload.withUnsafeBufferPointer { (buffer) throws(Failure) -> SightingBatch in
            var c = JSONReader(buffer, maxNesting: 32)
            let batch = try decodeBatch(&c)
            c.skipWhitespace()
            guard c.position == buffer.count else { throw Self.fail(c, "unexpected data after the batch object") }
            return batch
        }
    }

    /// A rejection at the reader's position.
    static func fail(_ c: JSONReader, _ what: String, _ reason: RejectReason = .malformed) -> Failure {
        Failure(description: "\(what) at byte \(c.position)", reason: reason)
    }

    /// The rejection for a text the reader refused: invalid UTF-8 is `badText`, a number beyond
    /// Double `outOfRange`, anything else `malformed`.
    static func failure(_ error: JSONError) -> Failure {
        let reason: RejectReason = switch error.kind {
        case .invalidUTF8: .badText
        case .numberOutOfRange: .outOfRange
        case .syntax: .malformed
        }
        return Failure(description: error.description, reason: reason)
    }

    private mutating func decodeBatch(_ c: inout JSONReader) throws(Failure) -> SightingBatch {
        var v: Int?, gateway: String?, boot: String?, seq: Double?, start: Double?, end: Double?
        var entries: [SightingBatch.Entry]?
        var object = try c.batchOpenObject()
        while try c.batchNext(in: &object) {
            let k = try c.batchKey()
            if k.equals("v") { v = Int(exactly: try c.batchNumber()) }
            else if k.equals("gateway") { gateway = try c.batchString() }
            else if k.equals("boot") { boot = try c.batchString() }
            else if k.equals("seq") { seq = try c.batchNumber() }
            else if k.equals("start") { start = try c.batchNumber() }
            else if k.equals("end") { end = try c.batchNumber() }
            else if k.equals("sightings") { entries = try decodeEntries(&c) }
            else { try c.batchSkipValue() }
        }
        guard let v else { throw Self.fail(c, "member 'v' (schema version) missing or not an integer") }
        guard let gateway else { throw Self.fail(c, "member 'gateway' missing") }
        guard let boot else { throw Self.fail(c, "member 'boot' missing") }
        if let r = FieldRules.checkText(boot) { throw Self.fail(c, "member 'boot' is empty, longer than \(FieldRules.maxTextBytes) bytes or holds control characters", r) }
        guard let seq else { throw Self.fail(c, "member 'seq' missing") }
        guard seq >= 0, seq < 9.007e15, seq == seq.rounded() else { throw Self.fail(c, "member 'seq' \(seq) is not an integer in 0…2^53", .outOfRange) }
        guard let start, let end else { throw Self.fail(c, "members 'start' and 'end' (window, Unix seconds) are required") }
        guard let entries else { throw Self.fail(c, "member 'sightings' missing") }
        var batch = SightingBatch(gateway: gateway, boot: boot, seq: UInt64(seq), start: start, end: end, sightings: entries)
        batch.v = v
        return batch
    }

    private mutating func decodeEntries(_ c: inout JSONReader) throws(Failure) -> [SightingBatch.Entry] {
        var out: [SightingBatch.Entry] = []
        var array = try c.batchOpenArray()
        while try c.batchNext(in: &array) { out.append(try decodeEntry(&c)) }
        return out
    }

    private mutating func decodeEntry(_ c: inout JSONReader) throws(Failure) -> SightingBatch.Entry {
        var device: DeviceID?
        var count: Double?, rssiMax: Double?, rssiMean: Double?, rssiLast: Double?, tx: Double?, first: Double?, last: Double?
        var telemetry: SightingBatch.Telemetry?
        var object = try c.batchOpenObject()
        while try c.batchNext(in: &object) {
            let k = try c.batchKey()
            if k.equals("device") { device = try deviceID(&c) }
            else if k.equals("count") { count = try c.batchNumber() }
            else if k.equals("rssi_max") { rssiMax = try c.batchNumber() }
            else if k.equals("rssi_mean") { rssiMean = try c.batchNumber() }
            else if k.equals("rssi_last") { rssiLast = try c.batchNumber() }
            else if k.equals("tx") { tx = c.consumeNull() ? nil : try c.batchNumber() }
            else if k.equals("first") { first = try c.batchNumber() }
            else if k.equals("last") { last = try c.batchNumber() }
            else if k.equals("telemetry") { telemetry = c.consumeNull() ? nil : try decodeTelemetry(&c) }
            else { try c.batchSkipValue() }
        }
        guard let device else { throw Self.fail(c, "sighting without 'device'") }
        guard let count else { throw Self.fail(c, "sighting without 'count'") }
        guard count >= 1, count < 1e9, count == count.rounded() else { throw Self.fail(c, "sighting 'count' \(count) is not an integer in 1…999999999", .outOfRange) }
        guard let rssiMax, let rssiMean, let rssiLast else { throw Self.fail(c, "sighting needs 'rssi_max', 'rssi_mean' and 'rssi_last'") }
        // Hot path: no array per entry.
        if !FieldRules.isDBm(rssiMax) || !FieldRules.isDBm(rssiMean) || !FieldRules.isDBm(rssiLast) {
            throw Self.fail(c, "sighting RSSI (rssi_max \(rssiMax), rssi_mean \(rssiMean), rssi_last \(rssiLast)) outside \(FieldRules.dBmRange) dBm", .outOfRange)
        }
        if let tx, !FieldRules.isDBm(tx) {
            throw Self.fail(c, "sighting 'tx' \(tx) outside \(FieldRules.dBmRange) dBm", .outOfRange)
        }
        guard let first, let last else { throw Self.fail(c, "sighting needs 'first' and 'last' (Unix seconds)") }
        return SightingBatch.Entry(device: device, count: Int(count), rssiMax: rssiMax, rssiMean: rssiMean, rssiLast: rssiLast,
                                   tx: tx, first: first, last: last, telemetry: telemetry)
    }

    private mutating func deviceID(_ c: inout JSONReader) throws(Failure) -> DeviceID {
        let text = try c.batchString()
        if let id = deviceCache[text] { return id }
        guard text.utf8.count <= FieldRules.maxDeviceIDBytes else {
            throw Self.fail(c, "device id longer than \(FieldRules.maxDeviceIDBytes) bytes", .badText)
        }
        guard let id = DeviceID(text) else { throw Self.fail(c, "'\(text.prefix(80))' is not a device id") }
        if deviceCache.count >= cacheLimit { deviceCache.removeAll(keepingCapacity: true) }
        deviceCache[text] = id
        return id
    }

    private mutating func decodeTelemetry(_ c: inout JSONReader) throws(Failure) -> SightingBatch.Telemetry {
        var battery: Double?, temperature: Double?
        var object = try c.batchOpenObject()
        while try c.batchNext(in: &object) {
            let k = try c.batchKey()
            if k.equals("battery_mv") { battery = c.consumeNull() ? nil : try c.batchNumber() }
            else if k.equals("temperature_c") { temperature = c.consumeNull() ? nil : try c.batchNumber() }
            else { try c.batchSkipValue() }
        }
        if let battery, FieldRules.checkNumber(battery, in: FieldRules.batteryRange, integer: true) != nil {
            throw Self.fail(c, "telemetry 'battery_mv' \(battery) is not an integer in \(FieldRules.batteryRange)", .outOfRange)
        }
        if let temperature, FieldRules.checkNumber(temperature, in: FieldRules.temperatureRange) != nil {
            throw Self.fail(c, "telemetry 'temperature_c' \(temperature) outside \(FieldRules.temperatureRange)", .outOfRange)
        }
        return SightingBatch.Telemetry(batteryMV: battery.map { Int($0) }, temperatureC: temperature)
    }
}

/// `JSONReader` with its errors as batch rejections (`BatchDecoder.failure`), and the batch's
/// rule that keys and text members are written without escapes.
private extension JSONReader {
    mutating func batchOpenObject() throws(BatchDecoder.Failure) -> JSONContainer {
        do { return try openObject() } catch { throw BatchDecoder.failure(error) }
    }

    mutating func batchOpenArray() throws(BatchDecoder.Failure) -> JSONContainer {
        do { return try openArray() } catch { throw BatchDecoder.failure(error) }
    }

    mutating func batchNext(in container: inout JSONContainer) throws(BatchDecoder.Failure) -> Bool {
        do { return try next(in: &container) } catch { throw BatchDecoder.failure(error) }
    }

    mutating func batchKey() throws(BatchDecoder.Failure) -> JSONString {
        do { return try readKey(allowingEscapes: false) } catch { throw BatchDecoder.failure(error) }
    }

    mutating func batchNumber() throws(BatchDecoder.Failure) -> Double {
        do { return try readNumber() } catch { throw BatchDecoder.failure(error) }
    }

    /// A text member, which must be valid UTF-8 (`badText` otherwise: never repaired, since the
    /// text may be stored) and written without escapes.
    mutating func batchString() throws(BatchDecoder.Failure) -> String {
        do { return try readString(allowingEscapes: false).value } catch { throw BatchDecoder.failure(error) }
    }

    mutating func batchSkipValue() throws(BatchDecoder.Failure) {
        do { try skipValue() } catch { throw BatchDecoder.failure(error) }
    }
}
