import Testing
import WaymarkAdvertising
import WaymarkCore
import WaymarkJSON
import Foundation

/// The JSON printed by `waymark decode`, checked by parsing it back.
@Suite struct DecodeOutputTests {
    @Test func iBeaconAdvert() throws {
        let line = DecodeOutput.advertisingData(hex: Hex.encodeSpaced(BeaconTests.iBeaconAD))
        #expect(!line.failed)
        #expect(line.json.rendered.hasPrefix(#"{"ad":{"flags":6,"manufacturer_data":[{"company_id":76,"data":"0215e2c5"#))
        let json = try parseJSON(line.json.rendered)
        let beacon = try #require(json["beacon"] as? [String: Any])
        #expect(beacon["format"] as? String == "ibeacon")
        #expect(beacon["uuid"] as? String == "e2c56db5-dffb-48d2-b060-d0f5a71096e0")
        #expect(beacon["major"] as? Int == 1)
        #expect(beacon["minor"] as? Int == 1)
        #expect(beacon["tx_power"] as? Int == -59)
    }

    @Test func eddystoneTLMFields() throws {
        let ad = bytes("03 03 AA FE 11 16 AA FE 20 00 0B B8 16 80 00 00 03 E8 00 00 27 11")
        let json = try parseJSON(DecodeOutput.advertisingData(hex: Hex.encodeSpaced(ad)).json.rendered)
        #expect((json["ad"] as? [String: Any])?["service_uuids"] as? [String] == ["0000feaa-0000-1000-8000-00805f9b34fb"])
        let b = try #require(json["beacon"] as? [String: Any])
        #expect(b["format"] as? String == "eddystone-tlm")
        #expect(b["version"] as? Int == 0)
        #expect(b["battery_mv"] as? Int == 3000)
        #expect(b["temperature_c"] as? Double == 22.5)
        #expect(b["adv_count"] as? Int == 1000)
        #expect(b["uptime_s"] as? Double == 1000.1)
    }

    @Test func altBeaconAndUIDFieldNames() throws {
        let alt = try parseJSON(DecodeOutput.advertisingData(hex: Hex.encodeSpaced(BeaconTests.altBeaconAD)).json.rendered)
        let a = try #require(alt["beacon"] as? [String: Any])
        #expect(a["id1"] as? String == "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6")
        #expect(a["id2"] as? Int == 1)
        #expect(a["id3"] as? Int == 2)
        #expect(a["ref_rssi"] as? Int == -59)
        #expect(a["mfg_reserved"] as? Int == 0)
        let uid = try parseJSON(DecodeOutput.advertisingData(hex: Hex.encodeSpaced(BeaconTests.eddystoneUIDAD)).json.rendered)
        let u = try #require(uid["beacon"] as? [String: Any])
        #expect(u["namespace"] as? String == "edd1ebeac04e5defa017")
        #expect(u["instance"] as? String == "0bdb87539b67")
        #expect(u["tx_power"] as? Int == -25)
    }

    @Test func hciEventReports() throws {
        let line = DecodeOutput.hciEvent(hex: Hex.encodeSpaced(HCIEventDecoderTests.real))
        #expect(!line.failed)
        let json = try parseJSON(line.json.rendered)
        let reports = try #require(json["reports"] as? [[String: Any]])
        #expect(reports.count == 1)
        let r = reports[0]
        #expect(r["event_type"] as? Int == 0)
        #expect(r["address"] as? String == "e7:e7:3e:12:73:2c")
        #expect(r["address_type"] as? Int == 1)
        #expect(r["rssi"] as? Int == -59)
        #expect(r["data"] as? String == "020106030307fe10ffa705051001000000000000011900ca03190000020a00")
        #expect(r["beacon"] is NSNull)
        #expect(r["device_id"] as? String == "mac:e7-e7-3e-12-73-2c")
        let ad = try #require(r["ad"] as? [String: Any])
        #expect(ad["tx_power"] as? Int == 0)
        #expect(line.json.rendered.hasPrefix(#"{"reports":[{"event_type":0,"address":"e7:e7:3e:12:73:2c","address_type":1,"#))
    }

    @Test func errorsAreObjectsWithCodeAndMessage() throws {
        let bad = DecodeOutput.hciEvent(hex: "04 3E 05 02 01")
        #expect(bad.failed)
        let e = try #require(try parseJSON(bad.json.rendered)["error"] as? [String: Any])
        #expect(e["code"] as? String == "parameter-length-mismatch")
        #expect((e["message"] as? String)?.contains("says 5 bytes but 2 follow") == true)

        let notHex = DecodeOutput.advertisingData(hex: "02 01 0G")
        #expect(notHex.failed)
        #expect(notHex.json.rendered.contains(#""code":"invalid-hex""#))
        #expect(notHex.json.rendered.contains("'G'"))
        #expect(DecodeOutput.advertisingData(hex: "02 01 0").json.rendered.contains("odd number"))

        let overrun = try parseJSON(DecodeOutput.advertisingData(hex: "05 09 41").json.rendered)
        #expect((overrun["error"] as? [String: Any])?["code"] as? String == "ad-length-overrun")
    }

    @Test func aReportWithMalformedADIsPrintedAndFails() throws {
        let line = DecodeOutput.hciEvent(bytes: legacyEvent(ad: [0x05, 0x09, 0x41]))
        #expect(line.failed)
        let r = try #require((try parseJSON(line.json.rendered)["reports"] as? [[String: Any]])?.first)
        #expect(r["ad"] is NSNull)
        #expect((r["ad_error"] as? [String: Any])?["code"] as? String == "ad-length-overrun")
        #expect(r["rssi"] as? Int == -60)
    }

    @Test func jsonStringsAreEscaped() {
        let v = JSONValue.object([("s", .string("a\"b\\c\n\u{1}é"))])
        #expect(v.rendered == #"{"s":"a\"b\\c\n\u0001é"}"#)
        #expect(JSONValue.double(22.5).rendered == "22.5")
        #expect(JSONValue.double(-3).rendered == "-3")
    }

    @Test func hcidumpCaptureText() {
        let capture = """
            HCI sniffer - Bluetooth packet analyzer ver 5.56
            device: hci0 snap_len: 1500 filter: 0xffffffffffffffff
            < 01 0B 20 07 01 10 00 10 00 00 00
            > 04 0E 04 01 0B 20 00
            > 04 3E 1A 02 01 00 01 EE 38 54 60 D8 7F 0E 02 01 06 0A FF 4C
              00 10 05 07 18 E2 9B 18 AA
            > 04 3E ZZ
            """
        let packets = HCIDumpCapture.packets(in: capture)
        #expect(packets.map(\.line) == [4, 5, 7])  // the sent command on line 3 is skipped
        #expect(DecodeOutput.isNonAdvertisingEvent(packets[0].bytes!))
        #expect(packets[1].bytes?.count == 29)
        #expect(!DecodeOutput.isNonAdvertisingEvent(packets[1].bytes!))
        #expect(packets[2].bytes == nil)
        let line = DecodeOutput.hciEvent(bytes: packets[1].bytes!, prefix: [("line", .int(packets[1].line))])
        #expect(line.json.rendered.hasPrefix(#"{"line":5,"reports":[{"event_type":0,"address":"7f:d8:60:54:38:ee""#))
    }
}

extension Hex {
    /// Hex with a space between bytes, as a user would paste it.
    static func encodeSpaced(_ b: [UInt8]) -> String { b.map { Hex.encode([$0]) }.joined(separator: " ") }
}
