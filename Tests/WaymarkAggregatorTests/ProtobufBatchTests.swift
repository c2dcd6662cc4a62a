import Foundation
import JSONFuzzSupport
import Testing
import WaymarkCore
import WaymarkEdge
import WaymarkProtobuf
@testable import WaymarkAggregator

/// The protobuf batch encoding against the JSON one: told apart by the first byte, decoded to the
/// same `SightingBatch`, rejected for the same reasons, and never a crash on damaged bytes.
@Suite struct ProtobufBatchTests {
    static let devices = [
        "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:0:0", "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:65535:65535",
        "mac:aa-bb-cc-dd-ee-ff", "mac:00-00-00-00-00-00", "anon:0011223344556677",
        "eddystone:00112233445566778899:aabbccddeeff", "altbeacon:0102030405060708090a0b0c0d0e0f10:1:2",
    ].map { DeviceID($0)! }

    /// Texts without `"`, `\` or control characters (the JSON decoder takes none of them unescaped,
    /// and the edge would have to escape them), but with multi-byte UTF-8.
    static let texts = ["gw-1", "b", "é", "ゲートウェイ", "🛰️-7", String(repeating: "x", count: 128)]

    static func pick(_ values: [Double], or range: ClosedRange<Double>, _ f: inout JSONFuzz) -> Double {
        f.chance(0.3) ? f.pick(values) : Double.random(in: range, using: &f.rng)
    }

    /// A random valid batch, often at the edges of its fields' ranges.
    static func randomBatch(_ f: inout JSONFuzz) -> SightingBatch {
        let dBm: [Double] = [-128, 127, 0, -0.0, -59, -70.33333333333333, .leastNonzeroMagnitude, -127.99999999999999]
        let times: [Double] = [0, 1_700_000_000, 1_700_000_000.123456789, 4_102_444_800, 1e-7, 2.5e9 + 0.1]
        let start = pick(times, or: 1_500_000_000...2_000_000_000, &f)
        let n = f.chance(0.1) ? 0 : f.int(1...6)
        var sightings: [SightingBatch.Entry] = []
        for _ in 0..<n {
            var telemetry: SightingBatch.Telemetry?
            if f.chance(0.5) {
                let anyBattery = f.int(0...65_535)
                let battery: Int? = f.chance(0.3) ? nil : f.pick([0, 65_535, anyBattery])
                let temperature: Double? = f.chance(0.3) ? nil : pick([-128, 128, 21.25, -0.0], or: -128...128, &f)
                telemetry = .init(batteryMV: battery, temperatureC: temperature)
            }
            let anyCount = f.int(1...999_999_999), smallCount = f.int(1...20)
            let count = f.pick([1, 999_999_999, anyCount, smallCount])
            let device = f.pick(devices)
            let rssiMax = pick(dBm, or: -128...127, &f), rssiMean = pick(dBm, or: -128...127, &f), rssiLast = pick(dBm, or: -128...127, &f)
            let tx: Double? = f.chance(0.4) ? nil : pick(dBm, or: -128...127, &f)
            let first = pick(times, or: start...(start + 1), &f), last = pick(times, or: start...(start + 1), &f)
            sightings.append(SightingBatch.Entry(device: device, count: count, rssiMax: rssiMax, rssiMean: rssiMean, rssiLast: rssiLast,
                                                 tx: tx, first: first, last: last, telemetry: telemetry))
        }
        let anySeq = UInt64(f.int(0...Int(UInt32.max)))
        let seq = f.pick([0, 1, 9_006_999_999_999_999, anySeq])
        let gateway = f.pick(texts), boot = f.pick(texts)
        let end = pick(times, or: start...(start + 2), &f)
        return SightingBatch(gateway: gateway, boot: boot, seq: seq, start: start, end: end, sightings: sightings)
    }

    func decode(_ payload: [UInt8]) throws(BatchDecoder.Failure) -> SightingBatch {
        var decoder = BatchDecoder()
        return try decoder.decode(payload)
    }

    func reason(_ payload: [UInt8]) -> RejectReason? {
        do { _ = try decode(payload); return nil } catch { return error.reason }
    }

    // MARK: Telling the encodings apart

    @Test("no top-level field's tag byte is '{' or JSON whitespace, whichever field comes first")
    func firstByteIsNeverJSON() {
        // A batch with only one field set starts with that field's tag: every possible first byte.
        var one: [Waymark_V1_SightingBatch] = []
        var m = Waymark_V1_SightingBatch(); m.v = 1; one.append(m)
        m = .init(); m.gateway = "g"; one.append(m)
        m = .init(); m.boot = "b"; one.append(m)
        m = .init(); m.seq = 1; one.append(m)
        m = .init(); m.start = 0; one.append(m)
        m = .init(); m.end = 0; one.append(m)
        m = .init(); m.sightings = [.init()]; one.append(m)
        m = .init(); m.sightingCount = 0; one.append(m)
        let firsts = one.map { (try? $0.serializedBytes() as [UInt8])?.first }
        #expect(firsts == [0x08, 0x12, 0x1A, 0x21, 0x29, 0x31, 0x3A, 0x40])
        for first in firsts { #expect(!BatchEncoding.startsJSON(first!)) }
        #expect([UInt8(ascii: "{"), 0x20, 0x09, 0x0A, 0x0D].allSatisfy(BatchEncoding.startsJSON))
    }

    @Test("random batches: protobuf payloads are recognised as protobuf, the edge's JSON (with any leading whitespace) as JSON")
    func payloadsAreToldApart() {
        var f = JSONFuzz(seed: 18)
        for _ in 0..<500 {
            let b = Self.randomBatch(&f)
            let proto = ProtobufBatchCoding.encode(b)
            #expect(BatchEncoding.of(proto) == .protobuf && proto.first == 0x08)
            let json = BatchCoding.encode(b)
            #expect(BatchEncoding.of(json) == .json)
            #expect(BatchEncoding.of(Array(f.space().utf8) + json) == .json)
        }
    }

    // MARK: Same values

    @Test("2,000 random batches, edge values included: JSON and protobuf decode to the same SightingBatch, equal to the original")
    func bothEncodingsDecodeIdentically() throws {
        var f = JSONFuzz(seed: 1818)
        var decoder = BatchDecoder()
        for i in 0..<2_000 {
            let b = Self.randomBatch(&f)
            let fromJSON = try decoder.decode(BatchCoding.encode(b))
            let fromProtobuf = try decoder.decode(ProtobufBatchCoding.encode(b))
            #expect(fromJSON == b, "batch \(i): JSON")
            #expect(fromProtobuf == b, "batch \(i): protobuf")
            // Bit for bit, not only ==: -0.0 and 0.0 are equal but stored differently.
            let bits = { (x: SightingBatch) in x.sightings.flatMap { [$0.rssiMax, $0.rssiMean, $0.rssiLast, $0.first, $0.last].map(\.bitPattern) } }
            #expect(bits(fromProtobuf) == bits(b), "batch \(i): protobuf bits")
            #expect(fromJSON.sightings.map(\.telemetry) == fromProtobuf.sightings.map(\.telemetry))
        }
    }

    @Test("a protobuf batch is smaller than the same batch in JSON")
    func smaller() {
        var f = JSONFuzz(seed: 7)
        let batches = (0..<200).map { _ in Self.randomBatch(&f) }
        let json = batches.reduce(0) { $0 + BatchCoding.encode($1).count }
        let proto = batches.reduce(0) { $0 + ProtobufBatchCoding.encode($1).count }
        #expect(proto < json)
    }

    // MARK: Same rejections

    static func base() -> SightingBatch {
        SightingBatch(gateway: "gw-1", boot: "b0a7", seq: 42, start: 1_700_000_000, end: 1_700_000_001, sightings: [
            .init(device: devices[0], count: 3, rssiMax: -50, rssiMean: -55.5, rssiLast: -60, tx: -59,
                  first: 1_700_000_000.1, last: 1_700_000_000.9, telemetry: .init(batteryMV: 2900, temperatureC: 21.25)),
        ])
    }

    /// A fault, the reason it must get, and the change that makes it.
    static func fault(_ name: String) -> (RejectReason, SightingBatch) {
        var b = base()
        let reason: RejectReason
        switch name {
        case "rssi_max above 127": b.sightings[0].rssiMax = 127.5; reason = .outOfRange
        case "rssi_last below -128": b.sightings[0].rssiLast = -200; reason = .outOfRange
        case "tx below -128": b.sightings[0].tx = -129; reason = .outOfRange
        case "count 0": b.sightings[0].count = 0; reason = .outOfRange
        case "count 10^9": b.sightings[0].count = 1_000_000_000; reason = .outOfRange
        case "battery above 65535": b.sightings[0].telemetry = .init(batteryMV: 65_536, temperatureC: nil); reason = .outOfRange
        case "temperature above 128": b.sightings[0].telemetry = .init(batteryMV: nil, temperatureC: 128.5); reason = .outOfRange
        case "seq beyond 2^53": b.seq = 9_100_000_000_000_000; reason = .outOfRange
        case "empty boot": b.boot = ""; reason = .badText
        case "boot of 129 bytes": b.boot = String(repeating: "b", count: 129); reason = .badText
        case "device id of 133 bytes": b.sightings[0].device = DeviceID("anon:" + String(repeating: "0", count: 128))!; reason = .badText
        default: preconditionFailure("unknown fault \(name)")
        }
        return (reason, b)
    }

    @Test("the same faulty batch is rejected for the same reason in both encodings", arguments: [
        "rssi_max above 127", "rssi_last below -128", "tx below -128", "count 0", "count 10^9", "battery above 65535",
        "temperature above 128", "seq beyond 2^53", "empty boot", "boot of 129 bytes", "device id of 133 bytes",
    ])
    func sameReasons(fault: String) {
        let (expected, b) = Self.fault(fault)
        #expect(reason(BatchCoding.encode(b)) == expected, "JSON, \(fault)")
        #expect(reason(ProtobufBatchCoding.encode(b)) == expected, "protobuf, \(fault)")
    }

    @Test("a required field left out is malformed in both encodings")
    func missingRequiredFields() throws {
        let json = String(decoding: BatchCoding.encode(Self.base()), as: UTF8.self)
        let cases: [(String, String, (inout Waymark_V1_SightingBatch) -> Void)] = [
            ("rssi_mean", #","rssi_mean":-55.5"#, { $0.sightings[0].clearRssiMean() }),
            ("first", #","first":1700000000.1"#, { $0.sightings[0].clearFirst() }),
            ("start", #","start":1700000000"#, { $0.clearStart() }),
            ("device", #""device":"ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:0:0","#, { $0.sightings[0].device = "" }),
            ("device text", #""device":"ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:0:0","#, { $0.sightings[0].device = "nope" }),
        ]
        for (field, member, change) in cases {
            #expect(json.contains(member), "\(field): \(member) not in \(json)")
            let withoutJSON = field == "device text" ? json.replacingOccurrences(of: member, with: #""device":"nope","#)
                                                     : json.replacingOccurrences(of: member, with: "")
            #expect(reason(Array(withoutJSON.utf8)) == .malformed, "JSON without \(field)")
            var m = ProtobufBatchCoding.message(Self.base())
            change(&m)
            #expect(reason(try m.serializedBytes()) == .malformed, "protobuf without \(field)")
        }
    }

    @Test("invalid UTF-8 in a text field is bad_text in both encodings")
    func invalidUTF8() throws {
        var b = Self.base()
        b.boot = "ZZZZ"
        for payload in [BatchCoding.encode(b), ProtobufBatchCoding.encode(b)] {
            var bytes = payload
            let at = try #require(bytes.indices.first { bytes[$0...].starts(with: Array("ZZZZ".utf8)) })
            bytes[at + 1] = 0xC3    // a lead byte followed by 'Z': not UTF-8
            #expect(reason(bytes) == .badText, "\(BatchEncoding.of(bytes))")
        }
    }

    @Test("a protobuf batch whose sighting_count is missing or wrong is malformed (cut at an entry boundary)")
    func sightingCountGuardsAgainstCuts() throws {
        var b = Self.base()
        b.sightings += b.sightings
        var m = ProtobufBatchCoding.message(b)
        m.sightingCount = 1
        #expect(reason(try m.serializedBytes()) == .malformed)
        m.clearSightingCount()
        #expect(reason(try m.serializedBytes()) == .malformed)
        m.sightings.removeLast()
        m.sightingCount = 1
        #expect(reason(try m.serializedBytes()) == nil)
    }

    // MARK: Damaged bytes

    @Test("every truncation of a valid protobuf batch is rejected as malformed")
    func truncations() {
        var f = JSONFuzz(seed: 99)
        for _ in 0..<50 {
            let full = ProtobufBatchCoding.encode(Self.randomBatch(&f))
            #expect(reason(full) == nil)
            for cut in 1..<full.count {
                #expect(reason(Array(full[0..<cut])) == .malformed, "cut at \(cut) of \(full.count)")
            }
        }
    }

    @Test("20,000 random and bit-flipped payloads: rejected with a reason or decoded to a valid batch, never a crash")
    func fuzz() throws {
        var f = JSONFuzz(seed: 4242)
        var rejected: [RejectReason: Int] = [:]
        var accepted = 0
        for round in 0..<20_000 {
            var bytes: [UInt8]
            switch round % 3 {
            case 0:  // random bytes, first one never JSON, so the protobuf decoder sees them
                bytes = (0..<f.int(0...200)).map { _ in UInt8.random(in: 0...255, using: &f.rng) }
                if let first = bytes.first, BatchEncoding.startsJSON(first) { bytes[0] = 0x08 }
            case 1:  // a valid batch with bytes flipped, inserted or removed
                bytes = ProtobufBatchCoding.encode(Self.randomBatch(&f))
                for _ in 0..<f.int(1...4) where !bytes.isEmpty {
                    let i = f.int(0...(bytes.count - 1))
                    switch f.int(0...2) {
                    case 0: bytes[i] ^= UInt8(1 << f.int(0...7))
                    case 1: bytes.insert(UInt8.random(in: 0...255, using: &f.rng), at: i)
                    default: bytes.remove(at: i)
                    }
                }
            default:  // a valid batch followed by random bytes
                bytes = ProtobufBatchCoding.encode(Self.randomBatch(&f)) + (0..<f.int(1...20)).map { _ in UInt8.random(in: 0...255, using: &f.rng) }
            }
            do {
                let b = try decode(bytes)
                accepted += 1
                // Whatever got through obeys the field rules.
                #expect(b.sightings.allSatisfy { FieldRules.isDBm($0.rssiMax) && $0.count >= 1 && $0.count < 1_000_000_000 })
                #expect(FieldRules.checkText(b.boot) == nil)
            } catch {
                rejected[error.reason, default: 0] += 1
                #expect([.malformed, .badText, .outOfRange].contains(error.reason))
                #expect(!error.description.isEmpty)
            }
        }
        #expect(rejected[.malformed, default: 0] > 10_000, "\(rejected), \(accepted) accepted")
    }

    // MARK: Through the core

    @Test("AggregatorCore takes protobuf and JSON batches on the same topic and counts a damaged protobuf batch like a damaged JSON one")
    func coreAcceptsBothAndCountsRejections() throws {
        let site = try LineVenue.site(count: 3)
        let topics = Topics(site: site.id)
        let settings = AggregatorCore.Settings(clock: .recorded)
        var core = AggregatorCore(site: site, topics: topics, settings: settings)
        func batch(_ seq: UInt64) -> SightingBatch {
            let t = 1_700_000_000 + Double(seq)
            return SightingBatch(gateway: "gw-0", boot: "b", seq: seq, start: t, end: t + 1, sightings: [
                .init(device: LineVenue.device(1), count: 2, rssiMax: -50, rssiMean: -52, rssiLast: -54, tx: -59, first: t + 0.1, last: t + 0.9),
            ])
        }
        let t = 1_700_000_100.0
        #expect(core.handle(topic: topics.sightings("gw-0"), payload: ProtobufBatchCoding.encode(batch(1)), receivedAt: t) == .accepted(sightings: 1))
        #expect(core.handle(topic: topics.sightings("gw-0"), payload: BatchCoding.encode(batch(2)), receivedAt: t) == .accepted(sightings: 1))
        #expect(core.handle(topic: topics.sightings("gw-0"), payload: ProtobufBatchCoding.encode(batch(3)), receivedAt: t) == .accepted(sightings: 1))
        // A resent protobuf batch is a duplicate like a JSON one.
        if case .duplicate = core.handle(topic: topics.sightings("gw-0"), payload: ProtobufBatchCoding.encode(batch(2)), receivedAt: t) {} else {
            Issue.record("a resent batch was not a duplicate")
        }
        let proto = ProtobufBatchCoding.encode(batch(4))
        let json = BatchCoding.encode(batch(4))
        #expect(core.handle(topic: topics.sightings("gw-0"), payload: Array(proto.dropLast(3)), receivedAt: t) == .rejected(.malformed, gateway: "gw-0"))
        #expect(core.handle(topic: topics.sightings("gw-0"), payload: Array(json.dropLast(3)), receivedAt: t) == .rejected(.malformed, gateway: "gw-0"))
        #expect(core.counts[.malformed] == 2)
        let sealed = core.sealWrite()
        let write = try #require(sealed)
        #expect(write.rejections.values.reduce(0, +) == 2)
        #expect(core.handle(topic: topics.sightings("gw-0"), payload: proto, receivedAt: t) == .accepted(sightings: 1))
    }
}
