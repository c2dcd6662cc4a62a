/// One advertising report from an LE Advertising Report (legacy) or LE Extended Advertising Report
/// event: who sent it, how loud, and the advertising data.
///
/// The advertising data is validated while the event is decoded. A report whose AD structures are
/// malformed is still returned (its address and RSSI are good data): `ad` is then nil and `adError`
/// says why, while `data` keeps the raw bytes.
public struct AdvertisingReport: Hashable, Sendable {
    /// Which HCI event the report came from.
    public enum Format: String, Hashable, Sendable { case legacy, extended }

    public var format: Format
    /// Legacy: 0 ADV_IND, 1 ADV_DIRECT_IND, 2 ADV_SCAN_IND, 3 ADV_NONCONN_IND, 4 SCAN_RSP.
    /// Extended: the event-properties bit field (see `ExtendedAdvertisingInfo`).
    public var eventType: UInt16
    public var address: BluetoothAddress
    /// Received signal strength in dBm; nil when the controller reported 127 (not available).
    public var rssi: Int8?
    /// The raw advertising data (AD structures) as received.
    public var data: [UInt8]
    /// Why `data` is not well-formed AD, or nil when it is.
    public var adError: ADDecodeError?
    /// Fields only extended advertising reports carry; nil for legacy reports.
    public var extended: ExtendedAdvertisingInfo?

    public init(
        format: Format, eventType: UInt16, address: BluetoothAddress, rssi: Int8?, data: [UInt8],
        extended: ExtendedAdvertisingInfo? = nil
    ) {
        self.format = format
        self.eventType = eventType
        self.address = address
        self.rssi = rssi
        self.data = data
        self.adError = AdvertisingData.validate(data)
        self.extended = extended
    }

    init(
        format: Format, eventType: UInt16, address: BluetoothAddress, rssi: Int8?, data: [UInt8],
        adError: ADDecodeError?, extended: ExtendedAdvertisingInfo?
    ) {
        self.format = format
        self.eventType = eventType
        self.address = address
        self.rssi = rssi
        self.data = data
        self.adError = adError
        self.extended = extended
    }

    /// The parsed advertising data, or nil when it is malformed (see `adError`).
    public var ad: AdvertisingData? {
        adError == nil ? AdvertisingData(validated: data) : nil
    }

    /// The beacon frame in the advertising data, if one is recognised.
    public var beacon: Beacon? { ad?.beacon }

    /// The legacy PDU type name (`ADV_IND` …), or nil for extended reports and reserved values.
    public var legacyEventTypeName: String? {
        guard format == .legacy else { return nil }
        switch eventType {
        case 0: return "ADV_IND"
        case 1: return "ADV_DIRECT_IND"
        case 2: return "ADV_SCAN_IND"
        case 3: return "ADV_NONCONN_IND"
        case 4: return "SCAN_RSP"
        default: return nil
        }
    }
}

/// The fields of an LE Extended Advertising Report beyond those of a legacy report.
public struct ExtendedAdvertisingInfo: Hashable, Sendable {
    /// Primary PHY: 1 = LE 1M, 3 = LE Coded.
    public var primaryPHY: UInt8
    /// Secondary PHY: 0 = none, 1 = LE 1M, 2 = LE 2M, 3 = LE Coded.
    public var secondaryPHY: UInt8
    /// Advertising set id, 0xFF when none.
    public var advertisingSID: UInt8
    /// Transmit power in dBm; nil when the controller reported 127 (not available).
    public var txPower: Int8?
    /// Periodic advertising interval in units of 1.25 ms; 0 when there is none.
    public var periodicAdvertisingInterval: UInt16
    /// The target address of a directed advertisement, nil when undirected.
    public var directAddress: BluetoothAddress?

    /// Whether the data is complete (0), incomplete with more to come (1) or truncated (2), from
    /// bits 5–6 of the event type.
    public static func dataStatus(eventType: UInt16) -> UInt8 { UInt8((eventType >> 5) & 0b11) }
}
