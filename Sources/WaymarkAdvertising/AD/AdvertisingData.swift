/// Validated advertising data: the AD structures of one advertisement or scan response.
///
/// Construction checks every length (framing and the value length of each interpreted type) and
/// keeps the bytes; the accessors decode on demand, so holding an `AdvertisingData` costs one
/// array. A zero length byte ends the significant part (the Core spec's padding rule); bytes after
/// it are kept in `bytes` but not interpreted.
public struct AdvertisingData: Hashable, Sendable {
    /// The raw AD bytes.
    public let bytes: [UInt8]

    /// Parses AD structures, throwing when a length is inconsistent.
    public init(parsing bytes: [UInt8]) throws(ADDecodeError) {
        if let error = Self.validate(bytes) { throw error }
        self.bytes = bytes
    }

    /// Parses AD structures from any byte sequence.
    public init(parsing bytes: some Sequence<UInt8>) throws(ADDecodeError) {
        try self.init(parsing: Array(bytes))
    }

    /// Parses AD structures without throwing: the data, or why it is malformed.
    public static func parseResult(_ bytes: [UInt8]) -> Result<AdvertisingData, ADDecodeError> {
        if let error = validate(bytes) { return .failure(error) }
        return .success(AdvertisingData(validated: bytes))
    }

    init(validated bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// All structures in order.
    public var structures: [ADStructure] {
        let span = bytes.span
        var cursor = ADCursor(start: 0, end: span.count)
        var out: [ADStructure] = []
        while let s = cursor.next(span) {
            out.append(Self.structure(span, type: s.type, start: s.start, end: s.end))
        }
        return out
    }

    /// The flags byte, if present.
    public var flags: UInt8? {
        firstValue(of: ADType.flags).map { bytes[$0.lowerBound] }
    }

    /// The complete local name, else the shortened one.
    public var localName: String? {
        var shortened: String? = nil
        for s in structures {
            if case .localName(let name, let complete) = s {
                if complete { return name }
                if shortened == nil { shortened = name }
            }
        }
        return shortened
    }

    /// The advertised tx power level in dBm, if present.
    public var txPowerLevel: Int8? {
        firstValue(of: ADType.txPowerLevel).map { Int8(bitPattern: bytes[$0.lowerBound]) }
    }

    /// All service UUIDs of all lists (complete and incomplete, every width), in order.
    public var serviceUUIDs: [BluetoothUUID] {
        structures.flatMap { s -> [BluetoothUUID] in
            if case .serviceUUIDs(let list, _) = s { return list }
            return []
        }
    }

    /// All service data structures, in order.
    public var serviceData: [ServiceData] {
        structures.compactMap { s in
            if case .serviceData(let d) = s { return d }
            return nil
        }
    }

    /// All manufacturer specific data structures, in order.
    public var manufacturerData: [ManufacturerData] {
        structures.compactMap { s in
            if case .manufacturerData(let d) = s { return d }
            return nil
        }
    }

    /// The value range of the first structure of `type`.
    func firstValue(of type: UInt8) -> Range<Int>? {
        let span = bytes.span
        var cursor = ADCursor(start: 0, end: span.count)
        while let s = cursor.next(span) {
            if s.type == type { return s.start..<s.end }
        }
        return nil
    }
}
