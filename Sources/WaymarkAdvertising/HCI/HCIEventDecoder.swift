/// Decodes HCI LE Meta events carrying advertising reports.
///
/// Accepted framing: an H4 packet (`04 3E len …`) or the bare event (`3E len …`, as delivered by a
/// raw HCI socket after the packet type byte or by `btmon`). The two cannot be confused: a bare
/// event starting with 0x04 would be a Connection Request event, which is rejected anyway.
///
/// Reports are read interleaved (all fields of report 0, then report 1, …), which is how BlueZ and
/// controllers lay out multi-report events. Every length is checked against the bytes present;
/// the parameter length must match exactly and no bytes may follow the last report.
///
/// Decoding reads through a bounds-checked `Span`, never copies the event, and allocates only the
/// result array and each report's data.
public enum HCIEventDecoder {
    /// The H4 packet indicator of an HCI event.
    public static let h4EventIndicator: UInt8 = 0x04
    /// The LE Meta event code.
    public static let leMetaEventCode: UInt8 = 0x3E
    /// LE Meta subevent: LE Advertising Report.
    public static let advertisingReportSubevent: UInt8 = 0x02
    /// LE Meta subevent: LE Extended Advertising Report.
    public static let extendedAdvertisingReportSubevent: UInt8 = 0x0D

    /// Decodes one event given as bytes.
    public static func decode(_ bytes: [UInt8]) throws(HCIDecodeError) -> [AdvertisingReport] {
        try decode(span: bytes.span)
    }

    /// Decodes one event in memory the caller owns (e.g. a socket read buffer); the bytes are
    /// only read during the call.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(HCIDecodeError) -> [AdvertisingReport] {
        try decode(span: Span<UInt8>(_unsafeBytes: bytes))
    }

    /// Decodes one event from a span of bytes.
    public static func decode(span bytes: Span<UInt8>) throws(HCIDecodeError) -> [AdvertisingReport] {
        var reports: [AdvertisingReport] = []
        if let error = decode(bytes, into: &reports) { throw error }
        return reports
    }

    /// Decodes one event without throwing: the reports, or why the event was rejected. Handy
    /// where rejections are routine and only counted.
    public static func decodeResult(_ bytes: [UInt8]) -> Result<[AdvertisingReport], HCIDecodeError> {
        var reports: [AdvertisingReport] = []
        if let error = decode(bytes.span, into: &reports) { return .failure(error) }
        return .success(reports)
    }

    /// The core: appends the event's reports to `reports` and returns nil, or returns the error
    /// (reports appended before the error are then meaningless). Errors are returned rather than
    /// thrown so that rejecting garbage costs no more than accepting data.
    static func decode(_ bytes: Span<UInt8>, into reports: inout [AdvertisingReport]) -> HCIDecodeError? {
        let header: Header
        switch parseHeader(bytes) {
        case .success(let h): header = h
        case .failure(let e): return e
        }
        reports.reserveCapacity(header.count)
        return header.extended
            ? decodeExtended(bytes, from: header.start, count: header.count, into: &reports)
            : decodeLegacy(bytes, from: header.start, count: header.count, into: &reports)
    }

    struct Header {
        var extended: Bool
        var count: Int
        /// Offset of the first report.
        var start: Int
    }

    static func parseHeader(_ bytes: Span<UInt8>) -> Result<Header, HCIDecodeError> {
        let n = bytes.count
        guard n > 0 else { return .failure(.empty) }
        var p = 0
        if bytes[0] == h4EventIndicator {
            p = 1
        } else if bytes[0] != leMetaEventCode {
            return .failure(.notEventPacket(firstByte: bytes[0]))
        }
        guard n - p >= 2 else { return .failure(.truncatedHeader(length: n)) }
        guard bytes[p] == leMetaEventCode else { return .failure(.notLEMetaEvent(eventCode: bytes[p])) }
        let declared = Int(bytes[p + 1])
        p += 2
        guard declared == n - p else { return .failure(.parameterLengthMismatch(declared: declared, actual: n - p)) }
        guard declared >= 2 else { return .failure(.truncatedHeader(length: n)) }
        let subevent = bytes[p]
        guard subevent == advertisingReportSubevent || subevent == extendedAdvertisingReportSubevent else {
            return .failure(.unsupportedSubevent(subevent))
        }
        let count = Int(bytes[p + 1])
        guard count > 0 else { return .failure(.noReports) }
        return .success(Header(extended: subevent == extendedAdvertisingReportSubevent, count: count, start: p + 2))
    }

    /// Legacy report: event type, address type, address (6, LSB first), data length, data, RSSI.
    static func decodeLegacy(
        _ bytes: Span<UInt8>, from start: Int, count: Int, into reports: inout [AdvertisingReport]
    ) -> HCIDecodeError? {
        let end = bytes.count
        var p = start
        for index in 0..<count {
            guard end - p >= 9 else { return .truncatedReport(index: index) }
            let length = Int(bytes[p + 8])
            guard length <= 31 else { return .legacyDataTooLong(index: index, length: length) }
            let dataStart = p + 9
            guard end - dataStart >= length + 1 else { return .truncatedReport(index: index) }
            let address = BluetoothAddress(
                value: readAddress(bytes, at: p + 2), type: AddressType(rawValue: bytes[p + 1]))
            let rssi = Int8(bitPattern: bytes[dataStart + length])
            reports.append(AdvertisingReport(
                format: .legacy, eventType: UInt16(bytes[p]), address: address,
                rssi: rssi == 127 ? nil : rssi,
                data: copy(bytes, dataStart, length),
                adError: AdvertisingData.validate(bytes, from: dataStart, to: dataStart + length),
                extended: nil))
            p = dataStart + length + 1
        }
        return p == end ? nil : .reportCountMismatch(declared: count, trailingBytes: end - p)
    }

    /// Extended report (24 fixed bytes, then data): event type (2, LE), address type, address,
    /// primary PHY, secondary PHY, SID, TX power, RSSI, periodic interval (2, LE), direct address
    /// type, direct address, data length, data.
    static func decodeExtended(
        _ bytes: Span<UInt8>, from start: Int, count: Int, into reports: inout [AdvertisingReport]
    ) -> HCIDecodeError? {
        let end = bytes.count
        var p = start
        for index in 0..<count {
            guard end - p >= 24 else { return .truncatedReport(index: index) }
            let length = Int(bytes[p + 23])
            guard length <= 229 else { return .extendedDataTooLong(index: index, length: length) }
            let dataStart = p + 24
            guard end - dataStart >= length else { return .truncatedReport(index: index) }
            let eventType = UInt16(bytes[p]) | UInt16(bytes[p + 1]) << 8
            let address = BluetoothAddress(
                value: readAddress(bytes, at: p + 3), type: AddressType(rawValue: bytes[p + 2]))
            let tx = Int8(bitPattern: bytes[p + 12])
            let rssi = Int8(bitPattern: bytes[p + 13])
            let directed = eventType & 0b100 != 0
            let info = ExtendedAdvertisingInfo(
                primaryPHY: bytes[p + 9], secondaryPHY: bytes[p + 10], advertisingSID: bytes[p + 11],
                txPower: tx == 127 ? nil : tx,
                periodicAdvertisingInterval: UInt16(bytes[p + 14]) | UInt16(bytes[p + 15]) << 8,
                directAddress: directed
                    ? BluetoothAddress(value: readAddress(bytes, at: p + 17), type: AddressType(rawValue: bytes[p + 16]))
                    : nil)
            reports.append(AdvertisingReport(
                format: .extended, eventType: eventType, address: address,
                rssi: rssi == 127 ? nil : rssi,
                data: copy(bytes, dataStart, length),
                adError: AdvertisingData.validate(bytes, from: dataStart, to: dataStart + length),
                extended: info))
            p = dataStart + length
        }
        return p == end ? nil : .reportCountMismatch(declared: count, trailingBytes: end - p)
    }

    /// Six bytes least significant first → a 48-bit value.
    @inline(__always)
    static func readAddress(_ bytes: Span<UInt8>, at p: Int) -> UInt64 {
        var v: UInt64 = 0
        for i in (0..<6).reversed() { v = v << 8 | UInt64(bytes[p + i]) }
        return v
    }

    @inline(__always)
    static func copy(_ bytes: Span<UInt8>, _ start: Int, _ count: Int) -> [UInt8] {
        if count == 0 { return [] }
        return bytes.extracting(start..<(start + count)).withUnsafeBufferPointer { Array($0) }
    }
}
