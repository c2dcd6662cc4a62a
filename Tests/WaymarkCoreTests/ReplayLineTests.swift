import Testing
@testable import WaymarkCore

/// How `waymark replay` reads a line's JSON (the grammar itself is WaymarkJSON's, fuzzed there):
/// the format's own rules and the messages that point at the problem.
@Suite struct ReplayLineTests {
    static let sighting = #""gateway":"g","device":"mac:e7-8f-13-56-24-ce","rssi":-77"#

    func message(_ line: String) -> String? {
        do {
            _ = try ReplayInput.parse(jsonLine: line)
            return nil
        } catch {
            return error.message
        }
    }

    @Test("arrays and objects are refused, even under a key the format does not use")
    func nested() {
        for line in ["{\"t\":1,\(Self.sighting),\"x\":[1]}", "{\"t\":{},\(Self.sighting)}", "{\"x\":{\"a\":1},\"t\":1,\(Self.sighting)}"] {
            #expect(message(line)?.contains("nested objects and arrays are not supported") == true, "\(line)")
        }
    }

    @Test("syntax errors name the column", arguments: [
        (#"{"t":01,"gateway":"g"}"#, "not a JSON object line: bad number (leading zero) at column 8"),
        (#"{"t":1,,"gateway":"g"}"#, "not a JSON object line: expected '\"' at column 8"),
        (#"{"t" 1}"#, "not a JSON object line: expected ':' after \"t\" at column 6"),
        (#"{"t":1} x"#, "not a JSON object line: text after the value at column 9"),
        ("   ", "empty line"),
    ])
    func syntax(_ line: String, _ expected: String) {
        #expect(message(line) == expected)
    }

    @Test("a time in milliseconds, microseconds or nanoseconds is refused with the unit it looks like", arguments: [
        (1_628_008_099_976.0, "milliseconds since 1970: divide it by 1,000"),
        (1_628_008_099_976_000.0, "microseconds since 1970: divide it by 1,000,000"),
        (1.628009151965e18, "nanoseconds since 1970: divide it by 1,000,000,000"),
    ])
    func timeUnits(_ t: Double, _ hint: String) throws {
        let m = try #require(message("{\"t\":\(t),\(Self.sighting)}"))
        #expect(m.contains("is not Unix seconds") && m.hasSuffix(hint), "\(m)")
        // Seconds, to the year 5000 and beyond any real recording, are read as they are.
        #expect(try SightingRecord(jsonLine: "{\"t\":1628008099.976,\(Self.sighting)}").time == 1_628_008_099.976)
        #expect(try SightingRecord(jsonLine: "{\"t\":99999999999,\(Self.sighting)}").time == 99_999_999_999)
    }

    @Test("keys are matched by their decoded text; of a key given twice the last counts; other members are ignored")
    func keys() throws {
        let s = try SightingRecord(jsonLine: "{\"\\u0074\":5,\(Self.sighting),\"rssi\":-60,\"truth\":\"hall\",\"extra\":null}")
        #expect(s.time == 5 && s.rssi == -60)
    }

    @Test("a member of the wrong type names the key and the value")
    func types() {
        #expect(message("{\"t\":true,\(Self.sighting)}") == "'t' must be Unix seconds or an ISO-8601 string, got true")
        #expect(message(#"{"t":1,"gateway":"g","device":"mac:e7-8f-13-56-24-ce","rssi":-77,"tx":"x"}"#) == "'tx' must be a number, got \"x\"")
    }

    @Test("the time alone: what parse reads as t, wherever it stands, other members skipped; nil where parse finds no time")
    func timeAlone() throws {
        func time(_ line: String) -> Double? {
            var text = line
            return text.withUTF8 { ReplayInput.time(jsonLine: $0) }
        }
        for line in ["{\"t\":1581249601.41,\(Self.sighting)}", "{\(Self.sighting),\"t\":1581249601.41}",
                     "{\"x\":{\"a\":[1,{\"t\":5}]},\"t\":\"2020-02-09T12:00:01.41Z\",\(Self.sighting)}",
                     "{\"t\":\"2020-02-09T13:00:01.41+01:00\",\"gateway\":\"g\",\"status\":\"offline\"}"] {
            #expect(time(line) == 1581249601.41, "\(line)")
        }
        // What parse reads (or refuses) the same way.
        let line = "{\"rssi\":-70,\"t\":-0.5e1,\"gateway\":\"g\",\"device\":\"mac:e7-8f-13-56-24-ce\"}"
        #expect(time(line) == (try? ReplayInput.parse(jsonLine: line))?.time)
        for line in ["{\(Self.sighting)}", "{\"t\":null,\(Self.sighting)}", "{\"t\":true}", "{\"t\":\"yesterday\"}",
                     "{\"t\":1581249601410,\(Self.sighting)}", "not json", "", "{\"t\":1"] {
            #expect(time(line) == nil, "\(line)")
        }
    }

    @Test("a device id written another way is refused with the id to write instead")
    func deviceWrittenOtherwise() {
        let tail = #","gateway":"g","rssi":-70}"#
        for (written, meant) in [("E7:8F:13:56:24:CE", "mac:e7-8f-13-56-24-ce"), ("e7-8f-13-56-24-ce", "mac:e7-8f-13-56-24-ce"),
                                 ("mac:e7:8f:13:56:24:ce", "mac:e7-8f-13-56-24-ce"), ("MAC:E7-8F-13-56-24-CE", "mac:e7-8f-13-56-24-ce"),
                                 ("ibeacon:F7826DA6-4FA2-4E98-8024-BC5B71E0893E:1:2", "ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:1:2")] {
            #expect(message(#"{"t":1,"device":"\#(written)""# + tail) == "'device' '\(written)' is not a device id as written: write it '\(meant)' (lower case; a MAC address as mac:aa-bb-cc-dd-ee-ff)")
        }
        for written in ["tag-1", "e7:8f:13:56:24", "mac:e7-8f-13-56-24-cg"] {
            #expect(message(#"{"t":1,"device":"\#(written)""# + tail)?.hasSuffix("mac:aa-bb-cc-dd-ee-ff or anon:<hex>)") == true, "\(written)")
        }
    }
}
