import Testing
import WaymarkAdvertising

@Suite struct AdvertisingDataTests {
    @Test func decodesEveryInterpretedStructure() throws {
        let ad = try AdvertisingData(parsing: bytes("""
            02 01 06
            05 08 57 61 79 00
            06 09 57 61 79 6D 6B
            02 0A F4
            05 02 0F 18 0A 18
            05 05 78 56 34 12
            11 06 9E CA DC 24 0E E5 A9 E0 93 F3 A3 B5 01 00 40 6E
            05 16 0F 18 64 01
            07 20 78 56 34 12 AA BB
            12 21 9E CA DC 24 0E E5 A9 E0 93 F3 A3 B5 01 00 40 6E 42
            06 FF 99 04 05 01 02
            03 19 C1 03
            """))
        let s = ad.structures
        #expect(s.count == 12)
        #expect(s[0] == .flags(6))
        #expect(s[1] == .localName("Way", complete: false))  // NUL padding dropped
        #expect(s[2] == .localName("Waymk", complete: true))
        #expect(s[3] == .txPowerLevel(-12))
        #expect(s[4] == .serviceUUIDs([BluetoothUUID(uuid16: 0x180F), BluetoothUUID(uuid16: 0x180A)], complete: false))
        #expect(s[5] == .serviceUUIDs([BluetoothUUID(uuid32: 0x1234_5678)], complete: true))
        #expect(ad.serviceUUIDs.map(\.description) == [
            "0000180f-0000-1000-8000-00805f9b34fb", "0000180a-0000-1000-8000-00805f9b34fb",
            "12345678-0000-1000-8000-00805f9b34fb", "6e400001-b5a3-f393-e0a9-e50e24dcca9e",
        ])
        #expect(s[7] == .serviceData(ServiceData(uuid: BluetoothUUID(uuid16: 0x180F), data: [0x64, 0x01])))
        #expect(ad.serviceData[1].uuid.uuid32 == 0x1234_5678)
        #expect(ad.serviceData[1].data == [0xAA, 0xBB])
        #expect(ad.serviceData[2].uuid.description == "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        #expect(ad.serviceData[2].data == [0x42])
        #expect(s[10] == .manufacturerData(ManufacturerData(companyID: 0x0499, data: [0x05, 0x01, 0x02])))
        #expect(s[11] == .other(type: 0x19, value: [0xC1, 0x03]))
        #expect(ad.flags == 6)
        #expect(ad.localName == "Waymk")  // complete preferred over shortened
        #expect(ad.txPowerLevel == -12)
        #expect(ad.beacon == nil)
    }

    @Test func uuidAliases() {
        let u = BluetoothUUID(uuid16: 0xFEAA)
        #expect(u.uuid16 == 0xFEAA)
        #expect(u.uuid32 == 0xFEAA)
        #expect(u.description == "0000feaa-0000-1000-8000-00805f9b34fb")
        #expect(BluetoothUUID(uuid32: 0x1_0000).uuid16 == nil)
        let full = BluetoothUUID(bigEndianBytes: bytes("6e400001b5a3f393e0a9e50e24dcca9e"))
        #expect(full?.uuid32 == nil)
        #expect(full?.bytes == bytes("6e400001b5a3f393e0a9e50e24dcca9e"))
    }

    @Test func emptyDataAndZeroPaddingAreValid() throws {
        #expect(try AdvertisingData(parsing: []).structures.isEmpty)
        // A zero length ends the significant part; what follows is padding.
        let padded = try AdvertisingData(parsing: bytes("02 01 06 00 00 00 FF"))
        #expect(padded.structures == [.flags(6)])
        // A structure with a type and no value is allowed for uninterpreted types.
        #expect(try AdvertisingData(parsing: [0x01, 0x19]).structures == [.other(type: 0x19, value: [])])
    }

    @Test(arguments: [
        ("03 01 06", ADDecodeError.lengthOverrun(offset: 0, length: 3, available: 2)),
        ("02 01 06 1A FF 4C 00 02 15", .lengthOverrun(offset: 3, length: 26, available: 5)),
        ("02 01 06 05", .lengthOverrun(offset: 3, length: 5, available: 0)),
        ("01 01", .malformedField(type: 0x01, offset: 0, length: 0, expected: "at least 1 byte")),
        ("04 03 AA FE 01", .malformedField(type: 0x03, offset: 0, length: 3, expected: "a multiple of 2 bytes")),
        ("04 05 01 02 03", .malformedField(type: 0x05, offset: 0, length: 3, expected: "a multiple of 4 bytes")),
        ("03 07 01 02", .malformedField(type: 0x07, offset: 0, length: 2, expected: "a multiple of 16 bytes")),
        ("03 0A F4 00", .malformedField(type: 0x0A, offset: 0, length: 2, expected: "exactly 1 byte")),
        ("02 16 AA", .malformedField(type: 0x16, offset: 0, length: 1, expected: "at least 2 bytes (the UUID)")),
        ("04 20 01 02 03", .malformedField(type: 0x20, offset: 0, length: 3, expected: "at least 4 bytes (the UUID)")),
        ("02 21 01", .malformedField(type: 0x21, offset: 0, length: 1, expected: "at least 16 bytes (the UUID)")),
        ("02 01 06 02 FF 4C", .malformedField(type: 0xFF, offset: 3, length: 1, expected: "at least 2 bytes (the company id)")),
    ])
    func rejectsMalformedData(hex: String, expected: ADDecodeError) {
        #expect(throws: expected) { try AdvertisingData(parsing: bytes(hex)) }
    }

    @Test func errorMessagesNameTheStructure() {
        let e = ADDecodeError.malformedField(type: 0x0A, offset: 6, length: 2, expected: "exactly 1 byte")
        #expect(e.code == "ad-field-malformed")
        #expect(e.message == "AD structure at byte 6 (type 0x0A, tx power level) has 2 value byte(s); expected exactly 1 byte")
        #expect(ADDecodeError.lengthOverrun(offset: 0, length: 3, available: 2).code == "ad-length-overrun")
    }

    @Test func invalidUTF8InANameIsReplacedNotRejected() throws {
        let ad = try AdvertisingData(parsing: [0x04, 0x09, 0x41, 0xFF, 0x42])
        #expect(ad.localName == "A\u{FFFD}B")
    }
}
