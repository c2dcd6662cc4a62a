import Testing
import WaymarkCore
@testable import WaymarkEdge

@Suite struct ReplayParserTests {
    func parse(_ text: String) -> [ReplayItem] {
        var p = ReplayParser()
        var out: [ReplayItem] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) { out += p.feed(line) }
        return out + p.finish()
    }

    @Test("hcidump: continuation lines, sent commands skipped, bad hex and junk lines reported with line numbers")
    func dump() {
        let items = parse("""
        HCI sniffer - Bluetooth packet analyzer ver 5.56
        device: hci0 snap_len: 1500 filter: 0xffffffffffffffff
        < 01 0B 20 07 01 10 00 10 00 00 00
        > 04 3E 0C 02 01 03 01 01 02 03 04 05 06 00
          B5
        > 04 3E ZZ
        garbage here
        > 04 3E 0C 02 01 03 01 01 02 03 04 05 06 00 B6
        """)
        #expect(items == [
            .hciEvent([0x04, 0x3E, 0x0C, 0x02, 0x01, 0x03, 0x01, 1, 2, 3, 4, 5, 6, 0x00, 0xB5], time: nil, line: 4),
            .malformed(line: 6, reason: "the packet's bytes are not hex pairs"),
            .malformed(line: 7, reason: "not an hcidump --raw line (expected '> ', '< ' or a continuation indented by two spaces)"),
            .hciEvent([0x04, 0x3E, 0x0C, 0x02, 0x01, 0x03, 0x01, 1, 2, 3, 4, 5, 6, 0x00, 0xB6], time: nil, line: 8),
        ])
    }

    @Test("hcidump -t timestamps become Unix times (UTC)")
    func timestamps() {
        let items = parse("""
        2021-03-04 05:06:07.250000 > 04 3E 01
          02
        2021-03-04 05:06:08.000000 < 01 02
        """)
        #expect(items == [.hciEvent([0x04, 0x3E, 0x01, 0x02], time: 1_614_834_367.25, line: 1)])
    }

    @Test("sightings JSONL: good lines, ISO-8601 times, and each kind of bad line")
    func jsonl() throws {
        let items = parse("""
        {"t": 1581249601.5, "gateway": "gw1", "device": "mac:e7-8f-13-56-24-ce", "rssi": -77, "tx": -59}
        {"t": "2020-02-09T12:00:01Z", "gateway": "gw1", "device": "mac:e7-8f-13-56-24-ce", "rssi": -70}
        {"t": 1, "gateway": "gw1", "device": "phone-of-bob", "rssi": -77}
        {"t": 1, "gateway": "gw1", "device": "mac:e7-8f-13-56-24-ce"}
        not json

        {"hex": "043e"}
        {"t": 1581249601500, "gateway": "gw1", "device": "mac:e7-8f-13-56-24-ce", "rssi": -77}
        """)
        #expect(items.count == 7)
        #expect(items[0] == .sighting(SightingRecord(time: 1_581_249_601.5, gateway: "gw1", device: DeviceID("mac:e7-8f-13-56-24-ce")!, rssi: -77, tx: -59), line: 1))
        #expect(items[1] == .sighting(SightingRecord(time: 1_581_249_601, gateway: "gw1", device: DeviceID("mac:e7-8f-13-56-24-ce")!, rssi: -70), line: 2))
        guard case .malformed(3, let r3) = items[2], case .malformed(4, let r4) = items[3], case .malformed(5, let r5) = items[4] else {
            Issue.record("expected malformed lines 3–5, got \(items)")
            return
        }
        #expect(r3.contains("'device'"), "\(r3)")
        #expect(r4.contains("'rssi'"), "\(r4)")
        #expect(r5.contains("JSON"), "\(r5)")
        #expect(items[5] == .hciEvent([0x04, 0x3E], time: nil, line: 7))
        guard case .malformed(8, let r8) = items[6] else {
            Issue.record("expected line 8 (a time in milliseconds) refused, got \(items[6])")
            return
        }
        #expect(r8.contains("milliseconds since 1970: divide it by 1,000"), "\(r8)")
    }
}
