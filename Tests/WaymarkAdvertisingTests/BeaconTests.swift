import Testing
import WaymarkAdvertising
import WaymarkCore

/// Beacon frames built from the published layouts (Apple iBeacon, Google Eddystone, Radius
/// Networks AltBeacon) with the example identifiers those documents and vendors use.
@Suite struct BeaconTests {
    /// AirLocate's proximity UUID, major 1, minor 1, measured power -59 dBm, as a full advert.
    static let iBeaconAD = bytes("02 01 06 1A FF 4C 00 02 15 E2 C5 6D B5 DF FB 48 D2 B0 60 D0 F5 A7 10 96 E0 00 01 00 01 C5")

    /// Eddystone-UID with the namespace of Google's examples, tx -25 dBm at 0 m, RFU bytes.
    static let eddystoneUIDAD = bytes("02 01 06 03 03 AA FE 17 16 AA FE 00 E7 ED D1 EB EA C0 4E 5D EF A0 17 0B DB 87 53 9B 67 00 00")

    /// The AltBeacon specification's example: company 0x0118, id1 2f234454-…, id2 1, id3 2, -59 dBm.
    static let altBeaconAD = bytes("1B FF 18 01 BE AC 2F 23 44 54 CF 6D 4A 0F AD F2 F4 91 1B A9 FF A6 00 01 00 02 C5 00")

    /// AD with one 16-bit service data structure for 0xFEAA carrying `frame`.
    func eddystone(_ frame: [UInt8]) throws -> Beacon? {
        let ad: [UInt8] = [0x03, 0x03, 0xAA, 0xFE, UInt8(frame.count + 3), 0x16, 0xAA, 0xFE] + frame
        return try AdvertisingData(parsing: ad).beacon
    }

    @Test func iBeacon() throws {
        let beacon = try AdvertisingData(parsing: Self.iBeaconAD).beacon
        let expected = IBeacon(uuid: BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 1, measuredPower: -59)
        #expect(beacon == .iBeacon(expected))
        #expect(beacon?.format == "ibeacon")
        #expect(beacon?.deviceID?.rawValue == "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1")
        #expect(beacon?.measuredPowerAt1m == -59)
    }

    @Test func appleAdvertsThatAreNotIBeaconsStayManufacturerData() throws {
        // Apple "nearby" data from the ruuvitag capture.
        let ad = try AdvertisingData(parsing: bytes("02 01 06 0A FF 4C 00 10 05 07 18 E2 9B 18"))
        #expect(ad.beacon == nil)
        #expect(ad.manufacturerData == [ManufacturerData(companyID: 0x004C, data: bytes("10 05 07 18 E2 9B 18"))])
    }

    @Test func unknownManufacturersKeepCompanyAndBytes() throws {
        let ad = try AdvertisingData(parsing: bytes("06 FF 34 12 01 02 03"))
        #expect(ad.beacon == nil)
        #expect(ad.manufacturerData.first?.companyID == 0x1234)
        #expect(ad.manufacturerData.first?.data == [1, 2, 3])
    }

    @Test func eddystoneUID() throws {
        guard case .eddystoneUID(let uid)? = try AdvertisingData(parsing: Self.eddystoneUIDAD).beacon else {
            Issue.record("not recognised as Eddystone-UID")
            return
        }
        #expect(uid.txPowerAt0m == -25)
        #expect(uid.namespace == bytes("edd1ebeac04e5defa017"))
        #expect(uid.instance == bytes("0bdb87539b67"))
        let beacon = Beacon.eddystoneUID(uid)
        #expect(beacon.deviceID?.rawValue == "eddystone:edd1ebeac04e5defa017:0bdb87539b67")
        #expect(beacon.measuredPowerAt1m == -66)
        // Without the two RFU bytes (many beacons omit them) it is still a UID frame.
        #expect(try eddystone(bytes("00 E7 ED D1 EB EA C0 4E 5D EF A0 17 0B DB 87 53 9B 67")) == beacon)
        // One byte short is not.
        #expect(try eddystone(bytes("00 E7 ED D1 EB EA C0 4E 5D EF A0 17 0B DB 87 53 9B")) == nil)
    }

    @Test func eddystoneURL() throws {
        // "https://goo.gl/S6zT6P", the Eddystone-URL documentation's example.
        let frame = [0x10, 0xEB, 0x03] + Array("goo.gl/S6zT6P".utf8)
        #expect(try eddystone(frame) == .eddystoneURL(EddystoneURL(txPowerAt0m: -21, url: "https://goo.gl/S6zT6P")))
        #expect(try eddystone(frame)?.format == "eddystone-url")
        #expect(try eddystone(frame)?.deviceID == nil)
    }

    @Test(arguments: [
        (0x00 as UInt8, [UInt8]("example".utf8) + [0x07], "http://www.example.com"),
        (0x01, [UInt8]("abc".utf8) + [0x00] + [UInt8]("x".utf8), "https://www.abc.com/x"),
        (0x02, [UInt8]("a".utf8) + [0x01, 0x02, 0x03, 0x04, 0x05, 0x06], "http://a.org/.edu/.net/.info/.biz/.gov/"),
        (0x03, [UInt8]("b".utf8) + [0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D], "https://b.org.edu.net.info.biz.gov"),
    ])
    func eddystoneURLExpansions(scheme: UInt8, encoded: [UInt8], url: String) throws {
        guard case .eddystoneURL(let u)? = try eddystone([0x10, 0x00, scheme] + encoded) else {
            Issue.record("not recognised")
            return
        }
        #expect(u.url == url)
    }

    @Test func eddystoneURLWithReservedCodesIsNotRecognised() throws {
        #expect(try eddystone([0x10, 0x00, 0x04, 0x61]) == nil)  // scheme 4 is reserved
        #expect(try eddystone([0x10, 0x00, 0x00, 0x61, 0x0E]) == nil)  // 0x0E is reserved
        #expect(try eddystone([0x10, 0x00, 0x00, 0x61, 0x80]) == nil)
    }

    @Test func eddystoneTLM() throws {
        // 3000 mV, 22.5 °C, 1000 PDUs, 1000.0 s (10000 × 0.1 s).
        let tlm = try eddystone(bytes("20 00 0B B8 16 80 00 00 03 E8 00 00 27 10"))
        #expect(tlm == .eddystoneTLM(EddystoneTLM(
            batteryMillivolts: 3000, temperatureCelsius: 22.5, advertisingCount: 1000, uptimeSeconds: 1000)))
        #expect(tlm?.format == "eddystone-tlm")
        #expect(tlm?.measuredPowerAt1m == nil)
        // Below zero (-0.5 °C), and the "not supported" values.
        guard case .eddystoneTLM(let cold)? = try eddystone(bytes("20 00 0C E4 FF 80 00 01 00 00 00 00 00 05")) else {
            Issue.record("not recognised")
            return
        }
        #expect(cold.batteryMillivolts == 3300)
        #expect(cold.temperatureCelsius == -0.5)
        #expect(cold.advertisingCount == 65536)
        #expect(cold.uptimeSeconds == 0.5)
        guard case .eddystoneTLM(let none)? = try eddystone(bytes("20 00 00 00 80 00 00 00 00 01 00 00 00 01")) else {
            Issue.record("not recognised")
            return
        }
        #expect(none.batteryMillivolts == nil)
        #expect(none.temperatureCelsius == nil)
    }

    @Test func eddystoneEncryptedTLMIsRecognisedAsSuch() throws {
        let etlm = try eddystone(bytes("20 01 01 02 03 04 05 06 07 08 09 0A 0B 0C 12 34 AB CD"))
        #expect(etlm == .eddystoneEncryptedTLM(EddystoneEncryptedTLM(
            encrypted: bytes("0102030405060708090a0b0c"), salt: 0x1234, mic: 0xABCD)))
        #expect(etlm?.format == "eddystone-etlm")
        // An unknown TLM version is neither.
        #expect(try eddystone(bytes("20 02 01 02 03 04 05 06 07 08 09 0A 0B 0C 12 34 AB CD")) == nil)
    }

    @Test func eddystoneEID() throws {
        let eid = try eddystone(bytes("30 F0 A1 B2 C3 D4 E5 F6 07 18"))
        #expect(eid == .eddystoneEID(EddystoneEID(txPowerAt0m: -16, eid: bytes("a1b2c3d4e5f60718"))))
        #expect(eid?.format == "eddystone-eid")
        #expect(eid?.deviceID == nil)  // rotates: not an identity
        #expect(eid?.measuredPowerAt1m == -57)
    }

    @Test func otherServiceDataIsNotEddystone() throws {
        let ad = try AdvertisingData(parsing: bytes("05 16 0F 18 64 00"))  // battery service data
        #expect(ad.beacon == nil)
    }

    @Test func altBeacon() throws {
        guard case .altBeacon(let alt)? = try AdvertisingData(parsing: Self.altBeaconAD).beacon else {
            Issue.record("not recognised as AltBeacon")
            return
        }
        #expect(alt.companyID == 0x0118)
        #expect(alt.id1 == bytes("2f234454cf6d4a0fadf2f4911ba9ffa6"))
        #expect(alt.id2 == 1)
        #expect(alt.id3 == 2)
        #expect(alt.referenceRSSI == -59)
        #expect(alt.manufacturerReserved == 0)
        let beacon = Beacon.altBeacon(alt)
        #expect(beacon.format == "altbeacon")
        #expect(beacon.deviceID?.rawValue == "altbeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1:2")
        #expect(beacon.measuredPowerAt1m == -59)
    }

    @Test func truncatedBeaconFramesAreNotRecognised() throws {
        // The iBeacon prefix with the measured power byte missing.
        let short = Array(Self.iBeaconAD.dropLast())
        var fixed = short
        fixed[3] -= 1
        let ad = try AdvertisingData(parsing: fixed)
        #expect(ad.beacon == nil)
        #expect(ad.manufacturerData.first?.companyID == 0x004C)
    }
}
