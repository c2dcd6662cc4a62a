/// One decoded AD structure of advertising or scan-response data.
public enum ADStructure: Hashable, Sendable {
    /// Flags (type 0x01): LE Limited/General Discoverable, BR/EDR not supported, …
    case flags(UInt8)
    /// Complete (0x09) or shortened (0x08) local name, decoded as UTF-8 (invalid sequences become
    /// U+FFFD, trailing NUL padding is dropped).
    case localName(String, complete: Bool)
    /// Tx power level (0x0A) in dBm.
    case txPowerLevel(Int8)
    /// A list of 16-, 32- or 128-bit service class UUIDs (0x02–0x07).
    case serviceUUIDs([BluetoothUUID], complete: Bool)
    /// Service data (0x16, 0x20, 0x21): a service UUID and the bytes after it.
    case serviceData(ServiceData)
    /// Manufacturer specific data (0xFF): the company id and the bytes after it.
    case manufacturerData(ManufacturerData)
    /// Any other AD type, kept as it was received.
    case other(type: UInt8, value: [UInt8])
}

/// Service data: the UUID of the service and its payload.
public struct ServiceData: Hashable, Sendable {
    public var uuid: BluetoothUUID
    public var data: [UInt8]
    public init(uuid: BluetoothUUID, data: [UInt8]) {
        self.uuid = uuid
        self.data = data
    }
}

/// Manufacturer specific data: the Bluetooth SIG company identifier and the bytes after it.
public struct ManufacturerData: Hashable, Sendable {
    /// The company identifier (e.g. 0x004C Apple, 0x0499 Ruuvi), sent little-endian.
    public var companyID: UInt16
    public var data: [UInt8]
    public init(companyID: UInt16, data: [UInt8]) {
        self.companyID = companyID
        self.data = data
    }
}

/// Walks validated AD structures by index, without allocating.
struct ADCursor {
    var position: Int
    let end: Int

    init(start: Int, end: Int) {
        self.position = start
        self.end = end
    }

    /// The next structure's type and value range, or nil at the end (or at a zero length byte,
    /// which ends the significant part). Assumes the data was validated.
    mutating func next(_ bytes: Span<UInt8>) -> (type: UInt8, start: Int, end: Int)? {
        guard position < end else { return nil }
        let length = Int(bytes[position])
        guard length > 0, end - position - 1 >= length else {
            position = end
            return nil
        }
        let item = (type: bytes[position + 1], start: position + 2, end: position + 1 + length)
        position += 1 + length
        return item
    }
}

extension AdvertisingData {
    /// Checks the AD framing of `bytes[start..<end]` and the value length of every type this module
    /// interprets. Offsets in the error are relative to `start`. A zero length byte ends the
    /// significant part: what follows it is padding and is not examined.
    static func validate(_ bytes: Span<UInt8>, from start: Int, to end: Int) -> ADDecodeError? {
        var p = start
        while p < end {
            let length = Int(bytes[p])
            if length == 0 { return nil }
            let available = end - p - 1
            guard length <= available else {
                return .lengthOverrun(offset: p - start, length: length, available: available)
            }
            let type = bytes[p + 1]
            if let rule = ADType.rule(type) {
                let valueLength = length - 1
                let ok = valueLength >= rule.min && valueLength % rule.multiple == 0
                    && (!rule.exact || valueLength == rule.min)
                if !ok {
                    return .malformedField(type: type, offset: p - start, length: valueLength, expected: rule.text)
                }
            }
            p += 1 + length
        }
        return nil
    }

    /// Validates a whole byte array as AD.
    static func validate(_ bytes: [UInt8]) -> ADDecodeError? {
        validate(bytes.span, from: 0, to: bytes.count)
    }

    /// Decodes one validated structure.
    static func structure(_ bytes: Span<UInt8>, type: UInt8, start: Int, end: Int) -> ADStructure {
        func value(_ from: Int) -> [UInt8] {
            from >= end ? [] : bytes.extracting(from..<end).withUnsafeBufferPointer { Array($0) }
        }
        switch type {
        case ADType.flags:
            return .flags(bytes[start])
        case ADType.shortenedLocalName, ADType.completeLocalName:
            var last = end
            while last > start && bytes[last - 1] == 0 { last -= 1 }
            let name = last == start ? "" : bytes.extracting(start..<last).withUnsafeBufferPointer {
                String(decoding: $0, as: UTF8.self)
            }
            return .localName(name, complete: type == ADType.completeLocalName)
        case ADType.txPowerLevel:
            return .txPowerLevel(Int8(bitPattern: bytes[start]))
        case ADType.incompleteUUID16...ADType.completeUUID128:
            let width = type <= ADType.completeUUID16 ? 2 : type <= ADType.completeUUID32 ? 4 : 16
            let uuids = stride(from: start, to: end, by: width).map {
                BluetoothUUID.read(bytes, at: $0, width: width)
            }
            return .serviceUUIDs(uuids, complete: type & 1 == 1)
        case ADType.serviceData16, ADType.serviceData32, ADType.serviceData128:
            let width = type == ADType.serviceData16 ? 2 : type == ADType.serviceData32 ? 4 : 16
            return .serviceData(ServiceData(
                uuid: BluetoothUUID.read(bytes, at: start, width: width), data: value(start + width)))
        case ADType.manufacturerSpecific:
            return .manufacturerData(ManufacturerData(
                companyID: UInt16(bytes[start]) | UInt16(bytes[start + 1]) << 8, data: value(start + 2)))
        default:
            return .other(type: type, value: value(start))
        }
    }
}
