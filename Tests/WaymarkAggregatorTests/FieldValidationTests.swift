import Foundation
import Testing
import WaymarkCore
@testable import WaymarkAggregator

/// Issue 20: every field is checked against what the store accepts, at ingest.
@Suite struct FieldValidationTests {
    @Test func textRulesRejectControlCharactersEmptinessAndLength() {
        #expect(FieldRules.checkText("b0a7") == nil)
        #expect(FieldRules.checkText("ünïcödé-✓") == nil)
        #expect(FieldRules.checkText(String(repeating: "x", count: FieldRules.maxTextBytes)) == nil)
        #expect(FieldRules.checkText(String(repeating: "x", count: FieldRules.maxTextBytes + 1)) == .badText)
        // Bytes, not characters: 43 × 3-byte characters = 129 bytes.
        #expect(FieldRules.checkText(String(repeating: "✓", count: 43)) == .badText)
        #expect(FieldRules.checkText("") == .badText)
        #expect(FieldRules.checkText("", required: false) == nil)
        for c in ["\u{0}", "\u{7}", "\n", "\t", "\u{1F}", "\u{7F}"] {
            #expect(FieldRules.checkText("a\(c)b") == .badText, "control \(c.unicodeScalars.first!.value)")
        }
    }

    @Test func numberRulesRejectNonFiniteOutOfRangeAndFractions() {
        let r = FieldRules.dBmRange
        #expect(FieldRules.checkNumber(-128, in: r) == nil)
        #expect(FieldRules.checkNumber(127, in: r) == nil)
        #expect(FieldRules.checkNumber(-128.0001, in: r) == .outOfRange)
        #expect(FieldRules.checkNumber(127.0001, in: r) == .outOfRange)
        for v in [Double.nan, .infinity, -.infinity, 1e300, -1e300] {
            #expect(FieldRules.checkNumber(v, in: r) == .outOfRange)
        }
        let depth = FieldRules.spoolDepthRange
        #expect(FieldRules.checkNumber(2_147_483_647, in: depth, integer: true) == nil)
        #expect(FieldRules.checkNumber(2_147_483_648, in: depth, integer: true) == .outOfRange)
        #expect(FieldRules.checkNumber(3e9, in: depth, integer: true) == .outOfRange)
        #expect(FieldRules.checkNumber(-1, in: depth, integer: true) == .outOfRange)
        #expect(FieldRules.checkNumber(1.5, in: depth, integer: true) == .outOfRange)
        #expect(FieldRules.checkNumber(0, in: depth, integer: true) == nil)
    }

    @Test func topicGatewayLabelsAreCleanedAndBounded() {
        #expect(FieldRules.label("gw-1") == "gw-1")
        #expect(FieldRules.label("gw\u{1}x") == "gwx")
        let long = String(repeating: "g", count: 500)
        #expect(FieldRules.label(long).unicodeScalars.count == FieldRules.maxLabelScalars)
    }

    // MARK: Batch decoder

    static func batchJSON(boot: String = "\"b\"", seq: String = "1", count: String = "1", rssi: String = "-60", tx: String = "-59",
                          telemetry: String = "null") -> [UInt8] {
        Array("""
            {"v":1,"gateway":"gw-1","boot":\(boot),"seq":\(seq),"start":1700000000,"end":1700000001,"sightings":[
            {"device":"\(LineVenue.device(1).rawValue)","count":\(count),"rssi_max":\(rssi),"rssi_mean":-61,"rssi_last":-62,
             "tx":\(tx),"first":1700000000.5,"last":1700000000.5,"telemetry":\(telemetry)}]}
            """.utf8)
    }

    func reason(_ payload: [UInt8]) -> RejectReason? {
        var d = BatchDecoder()
        do { _ = try d.decode(payload); return nil } catch { return error.reason }
    }

    @Test func batchFieldsAtAndBeyondTheirBoundaries() {
        #expect(reason(Self.batchJSON()) == nil)
        #expect(reason(Self.batchJSON(rssi: "-128")) == nil)
        #expect(reason(Self.batchJSON(rssi: "127")) == nil)
        for bad in ["1e300", "-1e300", "128", "-129", "1e39"] {
            #expect(reason(Self.batchJSON(rssi: bad)) == .outOfRange, "rssi \(bad)")
            #expect(reason(Self.batchJSON(tx: bad)) == .outOfRange, "tx \(bad)")
        }
        #expect(reason(Self.batchJSON(tx: "null")) == nil)
        #expect(reason(Self.batchJSON(rssi: "\"-60\"")) == .malformed)
        #expect(reason(Self.batchJSON(count: "1000000000")) == .outOfRange)
        #expect(reason(Self.batchJSON(count: "999999999")) == nil)
        for bad in ["0", "-1", "1.5", "3e9", "1e300"] { #expect(reason(Self.batchJSON(count: bad)) == .outOfRange, "count \(bad)") }
        for bad in ["-1", "0.5", "1e16", "1e300"] { #expect(reason(Self.batchJSON(seq: bad)) == .outOfRange, "seq \(bad)") }
        #expect(reason(Self.batchJSON(seq: "\"1\"")) == .malformed)
        #expect(reason(Self.batchJSON(telemetry: #"{"battery_mv":65535,"temperature_c":-128}"#)) == nil)
        for bad in ["-1", "65536", "1.5", "1e300"] {
            #expect(reason(Self.batchJSON(telemetry: "{\"battery_mv\":\(bad)}")) == .outOfRange, "battery \(bad)")
        }
        for bad in ["128.5", "-300", "1e300"] {
            #expect(reason(Self.batchJSON(telemetry: "{\"temperature_c\":\(bad)}")) == .outOfRange, "temperature \(bad)")
        }
    }

    @Test func batchStringsMustBeValidUTF8AndBounded() {
        #expect(reason(Self.batchJSON(boot: "\"\"")) == .badText)
        #expect(reason(Self.batchJSON(boot: "\"\(String(repeating: "b", count: 129))\"")) == .badText)
        #expect(reason(Self.batchJSON(boot: "\"\(String(repeating: "b", count: 128))\"")) == nil)
        // Invalid UTF-8 is rejected, never repaired into U+FFFD and stored.
        var invalid = Self.batchJSON(boot: "\"bXX\"")
        let at = invalid.firstIndex(of: UInt8(ascii: "X"))!
        invalid[at] = 0xC3
        invalid[at + 1] = 0x28
        #expect(reason(invalid) == .badText)
        // Device ids are bounded (the anon: grammar alone is not).
        let longID = "anon:" + String(repeating: "ab", count: 100)
        var long = Self.batchJSON()
        let text = String(decoding: long, as: UTF8.self).replacingOccurrences(of: LineVenue.device(1).rawValue, with: longID)
        long = Array(text.utf8)
        #expect(reason(long) == .badText)
        #expect(reason(Array(String(decoding: Self.batchJSON(), as: UTF8.self)
            .replacingOccurrences(of: LineVenue.device(1).rawValue, with: "anon:" + String(repeating: "ab", count: 61)).utf8)) == nil)
        // Escapes (and with them an escaped NUL) are not accepted in ids.
        #expect(reason(Self.batchJSON(boot: #""a\u0000b""#)) == .malformed)
    }

    // MARK: Status decoder

    static func statusJSON(_ overrides: [String: String] = [:]) -> [UInt8] {
        var m: [(String, String)] = [("state", "\"online\""), ("gateway", "\"gw-1\""), ("version", "\"1.2.3\""), ("boot", "\"b\""),
                                     ("spool_depth", "0"), ("spool_dropped", "0"), ("scan", "\"on\""), ("t", "1700000000.5")]
        for i in m.indices { if let o = overrides[m[i].0] { m[i].1 = o } }
        return Array(("{" + m.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}").utf8)
    }

    func statusReason(_ payload: [UInt8]) -> RejectReason? {
        do { _ = try StatusDecoder.decode(payload); return nil } catch { return error.reason }
    }

    @Test func statusFieldsAtAndBeyondTheirBoundaries() throws {
        let ok = try StatusDecoder.decode(Self.statusJSON(["spool_depth": "2147483647", "spool_dropped": "9007199254740992", "t": "0"]))
        #expect(ok.spoolDepth == 2_147_483_647 && ok.spoolDropped == 9_007_199_254_740_992 && ok.t == 0)
        #expect(statusReason(Self.statusJSON(["version": "null", "boot": "null", "scan": "null", "t": "null",
                                              "spool_depth": "null", "spool_dropped": "null"])) == nil)
        let cases: [(String, String, RejectReason)] = [
            ("t", "1e20", .outOfRange), ("t", "-1", .outOfRange), ("t", "4102444800.5", .outOfRange), ("t", "\"now\"", .malformed),
            ("spool_depth", "3e9", .outOfRange), ("spool_depth", "2147483648", .outOfRange), ("spool_depth", "-1", .outOfRange),
            ("spool_depth", "1.5", .outOfRange), ("spool_dropped", "1e19", .outOfRange), ("spool_dropped", "-5", .outOfRange),
            ("version", #""1\u0000""#, .badText), ("version", #""\u0007""#, .badText),
            ("version", "\"\(String(repeating: "v", count: 129))\"", .badText), ("boot", #""a\u0000""#, .badText),
            ("version", "5", .malformed), ("state", "\"sleeping\"", .badEnum), ("state", "1", .malformed),
            ("scan", "\"bogus\"", .badEnum), ("gateway", "\"\"", .badText),
        ]
        for (field, value, expected) in cases {
            #expect(statusReason(Self.statusJSON([field: value])) == expected, "\(field) = \(value)")
        }
        var invalid = Self.statusJSON(["version": "\"vXX\""])
        let at = invalid.firstIndex(of: UInt8(ascii: "X"))!
        invalid[at] = 0xFF
        #expect(statusReason(invalid) == .badText)
    }

    // MARK: In the core

    func core() throws -> AggregatorCore {
        var settings = AggregatorCore.Settings(clock: .recorded)
        settings.rawSightings = true
        return AggregatorCore(site: try LineVenue.site(count: 3), topics: Topics(site: "line"), settings: settings)
    }

    @Test func rejectedStatusesAreNotRecordedRetainedOrNot() throws {
        var c = try core()
        let topic = Topics(site: "line").status("gw-1")
        for retained in [false, true] {
            #expect(c.handle(topic: topic, payload: Self.statusJSON(["t": "1e20"]), receivedAt: 1_700_000_001, retained: retained)
                    == .rejected(.outOfRange, gateway: "gw-1"))
            #expect(c.handle(topic: topic, payload: Self.statusJSON(["spool_depth": "3e9"]), receivedAt: 1_700_000_001, retained: retained)
                    == .rejected(.outOfRange, gateway: "gw-1"))
            #expect(c.handle(topic: topic, payload: Self.statusJSON(["version": #""1\u0000""#]), receivedAt: 1_700_000_001, retained: retained)
                    == .rejected(.badText, gateway: "gw-1"))
        }
        #expect(c.handle(topic: topic, payload: Self.statusJSON(), receivedAt: 1_700_000_001) == .status(gateway: "gw-1"))
        let sealed = c.sealWrite()
        let write = try #require(sealed)
        #expect(write.statuses.count == 1)
        #expect(write.statuses[0].payload == Self.statusJSON())
        #expect(write.rejections.values.reduce(0, +) == 6)
        #expect(c.counts[.outOfRange] == 4 && c.counts[.badText] == 2)
    }

    @Test func aRejectedBatchLeavesNoRawSightingsAndTheNextIsStoredWithItsPayload() throws {
        var c = try core()
        let topic = Topics(site: "line").sightings("gw-1")
        #expect(c.handle(topic: topic, payload: Self.batchJSON(rssi: "1e300"), receivedAt: 1_700_000_002) == .rejected(.outOfRange, gateway: "gw-1"))
        #expect(c.handle(topic: topic, payload: Self.batchJSON(), receivedAt: 1_700_000_002) == .accepted(sightings: 1))
        let sealed = c.sealWrite()
        let write = try #require(sealed)
        #expect(write.rawSightings.count == 1)
        #expect(write.rawSources.count == 1 && write.rawSources[0].payload == Self.batchJSON() && write.rawSources[0].seq == 1)
        #expect(write.rejections.values.reduce(0, +) == 1)
    }

    @Test func aLongTopicGatewayIsCountedUnderABoundedLabel() throws {
        var c = try core()
        let gw = String(repeating: "x", count: 3000)
        let outcome = c.handle(topic: Topics(site: "line").sightings(gw), payload: Self.batchJSON(), receivedAt: 1_700_000_002)
        #expect(outcome == .rejected(.unknownGateway, gateway: String(repeating: "x", count: FieldRules.maxLabelScalars)))
        let sealed = c.sealWrite()
        let write = try #require(sealed)
        #expect(write.rejections.keys.allSatisfy { $0.gateway.count == FieldRules.maxLabelScalars })
    }
}
