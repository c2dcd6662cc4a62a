import Foundation
import JSONFuzzSupport
import Testing
import WaymarkCore
@testable import WaymarkAggregator

/// `BatchDecoder` (over WaymarkJSON's `JSONReader`, the aggregator's reader of every MQTT batch) against
/// Foundation's `JSONSerialization` on random valid batches and random mutations of them. The
/// decoder may reject valid JSON that is not a valid batch (a wrong type, a value out of range,
/// an escape in an id), but what it accepts must be JSON that Foundation reads to the same values,
/// and every generated batch that Foundation reads must be accepted.
@Suite struct BatchDecoderAgreementTests {
    static let devices = ["mac:aa-bb-cc-dd-ee-ff", "anon:0123456789abcdef", LineVenue.device(3).rawValue, "mac:02-00-00-00-00-01"]

    /// A finite Double written as JSON in one of several equivalent ways.
    static func text(_ value: Double, _ fuzz: inout JSONFuzz) -> String {
        switch fuzz.int(0...3) {
        case 0 where value == value.rounded() && abs(value) < 1e15: return String(Int(value))
        case 1: return String(format: "%.17e", value)
        case 2: return String(format: "%.17E", value).replacingOccurrences(of: "E+", with: "E")
        default: return "\(value)"
        }
    }

    static func member(_ key: String, _ value: String) -> (key: String, value: String) { ("\"\(key)\"", value) }

    /// Unknown members a newer sender might add: any JSON value under a new key.
    static func extras(_ fuzz: inout JSONFuzz) -> [(key: String, value: String)] {
        (0..<(fuzz.chance(0.3) ? fuzz.int(1...2) : 0)).map { n in member("x_\(n)", fuzz.value()) }
    }

    static func entry(_ fuzz: inout JSONFuzz) -> String {
        let first = Double(fuzz.int(1_700_000_000_000...1_700_000_999_999)) / 1000
        var members = [
            member("device", "\"\(fuzz.pick(devices))\""),
            member("count", text(Double(fuzz.int(1...40)), &fuzz)),
            member("rssi_max", text(Double(fuzz.int(-100 ... -30)), &fuzz)),
            member("rssi_mean", text(Double(fuzz.int(-1000 ... -300)) / 10, &fuzz)),
            member("rssi_last", text(Double(fuzz.int(-100 ... -30)), &fuzz)),
            member("tx", fuzz.chance(0.3) ? "null" : text(-59, &fuzz)),
            member("first", text(first, &fuzz)),
            member("last", text(first + Double(fuzz.int(0...999)) / 1000, &fuzz)),
        ]
        if fuzz.chance(0.3) {
            let telemetry = [member("battery_mv", text(Double(fuzz.int(2000...3300)), &fuzz)),
                             member("temperature_c", fuzz.chance(0.2) ? "null" : text(Double(fuzz.int(-200...400)) / 10, &fuzz))]
            members.append(member("telemetry", fuzz.chance(0.2) ? "null" : fuzz.object(telemetry + extras(&fuzz))))
        }
        members += extras(&fuzz)
        members.shuffle(using: &fuzz.rng)
        return fuzz.object(members)
    }

    static func batch(_ fuzz: inout JSONFuzz) -> [UInt8] {
        let start = Double(fuzz.int(1_700_000_000...1_800_000_000))
        let entries = (0..<fuzz.int(0...3)).map { _ in fuzz.space() + entry(&fuzz) + fuzz.space() }
        var members = [
            member("v", text(1, &fuzz)),
            member("gateway", "\"\(fuzz.pick(["gw-1", "gw-lobby", "anchor-6", "gw-\u{e9}t\u{e9}"]))\""),
            member("boot", "\"\(fuzz.pick(["b0a7", "4f1c9e", "boot-2"]))\""),
            member("seq", text(Double(fuzz.int(0...1_000_000)), &fuzz)),
            member("start", text(start, &fuzz)),
            member("end", text(start + 1, &fuzz)),
            member("sightings", "[" + entries.joined(separator: ",") + "]"),
        ]
        members += extras(&fuzz)
        members.shuffle(using: &fuzz.rng)
        return Array((fuzz.space() + fuzz.object(members) + fuzz.space()).utf8)
    }

    /// Why the decoded batch and Foundation's reading of `doc` differ, or nil.
    static func disagreement(_ batch: SightingBatch, _ doc: [UInt8]) -> String? {
        guard let ref = FoundationJSON.object(doc) else { return "accepted what Foundation rejects" }
        func number(_ key: String, _ ours: Double, in object: [String: Any]) -> String? {
            guard let value = object[key], FoundationJSON.sameNumber(ours, value) else {
                return "'\(key)' read as \(ours), Foundation read \(object[key] ?? "nothing")"
            }
            return nil
        }
        func optionalNumber(_ key: String, _ ours: Double?, in object: [String: Any]) -> String? {
            guard let ours else { return object[key] == nil || object[key] is NSNull ? nil : "'\(key)' missed: Foundation read \(object[key]!)" }
            return number(key, ours, in: object)
        }
        if FoundationJSON.stringBytes(ref["gateway"] as Any) != Array(batch.gateway.utf8) { return "'gateway' differs" }
        if FoundationJSON.stringBytes(ref["boot"] as Any) != Array(batch.boot.utf8) { return "'boot' differs" }
        for (key, ours) in [("v", Double(batch.v)), ("seq", Double(batch.seq)), ("start", batch.start), ("end", batch.end)] {
            if let why = number(key, ours, in: ref) { return why }
        }
        guard let entries = ref["sightings"] as? [[String: Any]], entries.count == batch.sightings.count else {
            return "\(batch.sightings.count) sightings, Foundation read \(ref["sightings"] ?? "none")"
        }
        for (e, r) in zip(batch.sightings, entries) {
            if FoundationJSON.stringBytes(r["device"] as Any) != Array(e.device.rawValue.utf8) { return "'device' differs" }
            for (key, ours) in [("count", Double(e.count)), ("rssi_max", e.rssiMax), ("rssi_mean", e.rssiMean),
                                ("rssi_last", e.rssiLast), ("first", e.first), ("last", e.last)] {
                if let why = number(key, ours, in: r) { return why }
            }
            if let why = optionalNumber("tx", e.tx, in: r) { return why }
            let telemetry = r["telemetry"] as? [String: Any] ?? [:]
            if let why = optionalNumber("battery_mv", e.telemetry?.batteryMV.map(Double.init), in: telemetry) { return why }
            if let why = optionalNumber("temperature_c", e.telemetry?.temperatureC, in: telemetry) { return why }
        }
        return nil
    }

    @Test("BatchDecoder accepts only what JSONSerialization reads, to the same values, on 20,000 random and mutated batches")
    func fuzz() {
        var fuzz = JSONFuzz(seed: 2121)
        var problems: [String] = []
        var acceptedMutants = 0
        for round in 0..<20_000 {
            let valid = Self.batch(&fuzz)
            let mutated = fuzz.chance(0.2) ? nil : fuzz.mutate(valid)
            var decoder = BatchDecoder()
            do {
                let batch = try decoder.decode(mutated ?? valid)
                if let why = Self.disagreement(batch, mutated ?? valid), problems.count < 10 {
                    problems.append("#\(round) \(FoundationJSON.show(mutated ?? valid)): \(why)")
                }
                if mutated != nil { acceptedMutants += 1 }
            } catch {
                // (A generated extra member may hold a number too large for a Double: not JSON to Foundation either.)
                if mutated == nil, FoundationJSON.object(valid) != nil, problems.count < 10 {
                    problems.append("#\(round) valid batch rejected: \(error) in \(FoundationJSON.show(valid))")
                }
            }
        }
        #expect(problems.isEmpty, "BatchDecoder and JSONSerialization disagree:\n\(problems.joined(separator: "\n"))")
        // Enough mutants must get through for the comparison of values to mean something.
        #expect(acceptedMutants > 1_000, "only \(acceptedMutants) mutated batches were accepted")
    }

    @Test("batch numbers and skipped members follow RFC 8259", arguments: [
        "01", "-01", "1.", ".5", "+1", "1e", "1e+", "--1", "1.2.3", "1-2", "1e5e5", "0x10", "1e400", "-1e400", "-", "1E+",
    ])
    func badNumbers(_ number: String) {
        var decoder = BatchDecoder()
        let asField = #"{"v":1,"gateway":"g","boot":"b","seq":1,"start":"#  + number + #","end":2,"sightings":[]}"#
        let asUnknown = #"{"v":1,"gateway":"g","boot":"b","seq":1,"start":1,"end":2,"sightings":[],"x":"# + number + "}"
        #expect(FoundationJSON.object(Array(asField.utf8)) == nil, "Foundation accepts \(asField)")
        #expect(throws: BatchDecoder.Failure.self, "accepted \(asField)") { try decoder.decode(Array(asField.utf8)) }
        #expect(throws: BatchDecoder.Failure.self, "accepted \(asUnknown)") { try decoder.decode(Array(asUnknown.utf8)) }
    }

    @Test("BatchDecoder rejects invalid text in skipped members", arguments: [
        #"tru"#, #"nul"#, #"falsey"#, #"truefalse"#, "\"a\u{01}b\"", #""\x41""#, #""\u12""#, #"[1,]"#, #"{"a":1,}"#, #"[1 2]"#,
        #"{"a" 1}"#, #"{1:2}"#, #"[,]"#, #""\ud83d""#,
    ])
    func badSkippedValues(_ value: String) {
        var decoder = BatchDecoder()
        let doc = #"{"v":1,"gateway":"g","boot":"b","seq":1,"start":1,"end":2,"sightings":[],"x":"# + value + "}"
        #expect(FoundationJSON.object(Array(doc.utf8)) == nil, "Foundation accepts \(doc)")
        #expect(throws: BatchDecoder.Failure.self, "accepted \(doc)") { try decoder.decode(Array(doc.utf8)) }
    }
}
