import Testing
import WaymarkAdvertising

@Suite struct HCIEventDecoderTests {
    /// A real event from the ruuvitag 3.x capture: ADV_IND, random address E7:E7:3E:12:73:2C,
    /// flags, 16-bit UUID FE07, manufacturer 0x05A7, tx power 0, RSSI -59.
    static let real = bytes("""
        04 3E 2B 02 01 00 01 2C 73 12 3E E7 E7 1F 02 01 06 03 03 07 FE 10 FF A7 05 05 10 01 00 00
        00 00 00 00 01 19 00 CA 03 19 00 00 02 0A 00 C5
        """)

    @Test func decodesALegacyReport() throws {
        let reports = try HCIEventDecoder.decode(Self.real)
        #expect(reports.count == 1)
        let r = reports[0]
        #expect(r.format == .legacy)
        #expect(r.eventType == 0)
        #expect(r.legacyEventTypeName == "ADV_IND")
        #expect(r.address.description == "e7:e7:3e:12:73:2c")
        #expect(r.address.type == .random)
        #expect(r.address.kind == .randomStatic)
        #expect(r.rssi == -59)
        #expect(r.data.count == 31)
        #expect(r.adError == nil)
        #expect(r.ad?.flags == 0x06)
        #expect(r.ad?.serviceUUIDs == [BluetoothUUID(uuid16: 0xFE07)])
        #expect(r.ad?.manufacturerData.first?.companyID == 0x05A7)
        #expect(r.extended == nil)
    }

    @Test func acceptsTheEventWithoutTheH4Byte() throws {
        let bare = Array(Self.real.dropFirst())
        #expect(try HCIEventDecoder.decode(bare) == HCIEventDecoder.decode(Self.real))
    }

    @Test func decodesFromRawMemory() throws {
        let reports = try Self.real.withUnsafeBytes { raw throws(HCIDecodeError) in try HCIEventDecoder.decode(raw) }
        #expect(reports == (try HCIEventDecoder.decode(Self.real)))
    }

    @Test func decodesSeveralReportsInOneEvent() throws {
        // Two reports, interleaved: an ADV_NONCONN_IND with flags and a SCAN_RSP with a name;
        // the second RSSI is 127 (not available).
        let first: [UInt8] = [0x03, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x03, 0x02, 0x01, 0x06, 0xB0]
        let second: [UInt8] = [0x04, 0x01, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0x4F, 0x05, 0x04, 0x09, 0x41, 0x42, 0x43, 0x7F]
        let event: [UInt8] = [0x04, 0x3E, UInt8(2 + first.count + second.count), 0x02, 0x02] + first + second
        let reports = try HCIEventDecoder.decode(event)
        #expect(reports.count == 2)
        #expect(reports[0].address.description == "06:05:04:03:02:01")
        #expect(reports[0].rssi == -80)
        #expect(reports[0].ad?.flags == 6)
        #expect(reports[1].address.description == "4f:ee:dd:cc:bb:aa")
        #expect(reports[1].address.kind == .resolvablePrivate)
        #expect(reports[1].rssi == nil)
        #expect(reports[1].ad?.localName == "ABC")
    }

    @Test func decodesAnExtendedReport() throws {
        let ad = bytes("02 01 06 05 09 57 61 79 6D")  // flags, name "Waym"
        let event = extendedEvent(ad: ad, eventType: 0x0013, rssi: -70, tx: -4)
        let r = try #require(try HCIEventDecoder.decode(event).first)
        #expect(r.format == .extended)
        #expect(r.eventType == 0x0013)
        #expect(r.address.description == "c6:05:04:03:02:01")
        #expect(r.address.kind == .randomStatic)
        #expect(r.rssi == -70)
        #expect(r.extended?.txPower == -4)
        #expect(r.extended?.primaryPHY == 1)
        #expect(r.extended?.advertisingSID == 0xFF)
        #expect(r.extended?.directAddress == nil)
        #expect(r.ad?.localName == "Waym")
        #expect(ExtendedAdvertisingInfo.dataStatus(eventType: 0x0020) == 1)
    }

    @Test func extendedDataMayExceedTheLegacyLimit() throws {
        // 200 bytes of manufacturer data: fine in an extended report, impossible in a legacy one.
        let ad: [UInt8] = [200, 0xFF, 0x59, 0x00] + [UInt8](repeating: 0xAB, count: 197)
        let r = try #require(try HCIEventDecoder.decode(extendedEvent(ad: ad)).first)
        #expect(r.ad?.manufacturerData.first?.data.count == 197)
    }

    @Test func resultFormsAgreeWithThrowingForms() throws {
        #expect(try HCIEventDecoder.decodeResult(Self.real).get() == HCIEventDecoder.decode(Self.real))
        #expect(throws: HCIDecodeError.noReports) { try HCIEventDecoder.decodeResult([0x3E, 0x02, 0x02, 0x00]).get() }
        #expect(try AdvertisingData.parseResult([0x02, 0x01, 0x06]).get().flags == 6)
        #expect(throws: ADDecodeError.lengthOverrun(offset: 0, length: 2, available: 1)) {
            try AdvertisingData.parseResult([0x02, 0x01]).get()
        }
    }

    // MARK: Rejections

    @Test(arguments: [
        ([UInt8](), HCIDecodeError.empty),
        ([0x01, 0x03, 0x0C, 0x00], .notEventPacket(firstByte: 0x01)),
        ([0x04, 0x3E], .truncatedHeader(length: 2)),
        ([0x04, 0x0E, 0x04, 0x01, 0x0B, 0x20, 0x00], .notLEMetaEvent(eventCode: 0x0E)),
        ([0x04, 0x3E, 0x03, 0x01, 0x00, 0x00], .unsupportedSubevent(0x01)),
        ([0x04, 0x3E, 0x02, 0x02, 0x00], .noReports),
        ([0x04, 0x3E, 0x01, 0x02], .truncatedHeader(length: 4)),
    ])
    func rejectsBadHeaders(event: [UInt8], expected: HCIDecodeError) {
        #expect(throws: expected) { try HCIEventDecoder.decode(event) }
    }

    @Test func rejectsAParameterLengthThatDisagreesWithTheBytes() {
        var short = Self.real
        short.removeLast()
        #expect(throws: HCIDecodeError.parameterLengthMismatch(declared: 0x2B, actual: 0x2A)) {
            try HCIEventDecoder.decode(short)
        }
        #expect(throws: HCIDecodeError.parameterLengthMismatch(declared: 0x2B, actual: 0x2C)) {
            try HCIEventDecoder.decode(Self.real + [0x00])
        }
    }

    @Test func rejectsATruncatedReport() {
        // Report data length says 0x1F but the event (length adjusted to match) ends sooner.
        var event = Array(Self.real.prefix(30))
        event[2] = UInt8(event.count - 3)
        #expect(throws: HCIDecodeError.truncatedReport(index: 0)) { try HCIEventDecoder.decode(event) }
    }

    @Test func rejectsAReportCountMismatch() {
        var twoDeclared = Self.real
        twoDeclared[4] = 2  // one report present, two declared
        #expect(throws: HCIDecodeError.truncatedReport(index: 1)) { try HCIEventDecoder.decode(twoDeclared) }
        // One declared but bytes for a second remain.
        let one = legacyEvent(ad: [0x02, 0x01, 0x06])
        var extra = one + [0x00, 0x00]
        extra[2] += 2
        #expect(throws: HCIDecodeError.reportCountMismatch(declared: 1, trailingBytes: 2)) {
            try HCIEventDecoder.decode(extra)
        }
    }

    @Test func rejectsOversizeData() {
        var legacy = legacyEvent(ad: [UInt8](repeating: 0, count: 32))
        #expect(throws: HCIDecodeError.legacyDataTooLong(index: 0, length: 32)) { try HCIEventDecoder.decode(legacy) }
        legacy = legacyEvent(ad: [UInt8](repeating: 0, count: 31))
        #expect(throws: Never.self) { try HCIEventDecoder.decode(legacy) }
        // 230 declared bytes can never fit in one event (255 parameter bytes at most), whatever follows.
        let ext = extendedEvent(ad: [UInt8](repeating: 0, count: 20), dataLength: 230)
        #expect(throws: HCIDecodeError.extendedDataTooLong(index: 0, length: 230)) { try HCIEventDecoder.decode(ext) }
    }

    @Test func errorsHaveStableCodesAndSayWhatToFix() {
        let e = HCIDecodeError.legacyDataTooLong(index: 0, length: 40)
        #expect(e.code == "legacy-data-too-long")
        #expect(e.message.contains("at most 31 bytes"))
        #expect(HCIDecodeError.notLEMetaEvent(eventCode: 0x0E).message.contains("0x0E"))
        #expect(HCIDecodeError.parameterLengthMismatch(declared: 5, actual: 4).code == "parameter-length-mismatch")
    }

    @Test func keepsAReportWhoseADIsMalformed() throws {
        // Address and RSSI are good data even when the AD inside is not.
        let event = legacyEvent(ad: [0x05, 0xFF, 0x4C, 0x00], address: [1, 2, 3, 4, 5, 0xC0], rssi: -71)
        let r = try #require(try HCIEventDecoder.decode(event).first)
        #expect(r.rssi == -71)
        #expect(r.ad == nil)
        #expect(r.adError == .lengthOverrun(offset: 0, length: 5, available: 3))
        #expect(r.data == [0x05, 0xFF, 0x4C, 0x00])
    }
}
