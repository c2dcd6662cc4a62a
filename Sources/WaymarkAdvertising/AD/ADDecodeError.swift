/// Why advertising data (a sequence of AD structures) is malformed.
public enum ADDecodeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The AD structure at `offset` declares `length` bytes but only `available` remain.
    case lengthOverrun(offset: Int, length: Int, available: Int)
    /// The AD structure at `offset` has a type whose value must be `expected` but is `length` bytes.
    case malformedField(type: UInt8, offset: Int, length: Int, expected: String)

    /// A stable machine-readable identifier of the failure.
    public var code: String {
        switch self {
        case .lengthOverrun: "ad-length-overrun"
        case .malformedField: "ad-field-malformed"
        }
    }

    /// A human explanation naming the offending structure.
    public var message: String {
        switch self {
        case .lengthOverrun(let offset, let length, let available):
            "AD structure at byte \(offset) declares length \(length) but only \(available) byte(s) follow the length byte; the advertising data is truncated or a length is wrong"
        case .malformedField(let type, let offset, let length, let expected):
            "AD structure at byte \(offset) (type 0x\(hex2(type)), \(ADType.name(type))) has \(length) value byte(s); expected \(expected)"
        }
    }

    public var description: String { "\(code): \(message)" }
}

/// Assigned numbers of the AD types this module interprets.
public enum ADType {
    public static let flags: UInt8 = 0x01
    public static let incompleteUUID16: UInt8 = 0x02
    public static let completeUUID16: UInt8 = 0x03
    public static let incompleteUUID32: UInt8 = 0x04
    public static let completeUUID32: UInt8 = 0x05
    public static let incompleteUUID128: UInt8 = 0x06
    public static let completeUUID128: UInt8 = 0x07
    public static let shortenedLocalName: UInt8 = 0x08
    public static let completeLocalName: UInt8 = 0x09
    public static let txPowerLevel: UInt8 = 0x0A
    public static let serviceData16: UInt8 = 0x16
    public static let serviceData32: UInt8 = 0x20
    public static let serviceData128: UInt8 = 0x21
    public static let manufacturerSpecific: UInt8 = 0xFF

    /// A short English name of the type, for messages.
    public static func name(_ type: UInt8) -> String {
        switch type {
        case flags: "flags"
        case incompleteUUID16, completeUUID16: "16-bit service UUIDs"
        case incompleteUUID32, completeUUID32: "32-bit service UUIDs"
        case incompleteUUID128, completeUUID128: "128-bit service UUIDs"
        case shortenedLocalName: "shortened local name"
        case completeLocalName: "complete local name"
        case txPowerLevel: "tx power level"
        case serviceData16: "16-bit service data"
        case serviceData32: "32-bit service data"
        case serviceData128: "128-bit service data"
        case manufacturerSpecific: "manufacturer specific data"
        default: "other"
        }
    }

    /// The value-length rule of a type this module interprets, or nil when any length is fine.
    /// Returns (minimum, multiple-of, exact) in the form used by validation and messages.
    static func rule(_ type: UInt8) -> (min: Int, multiple: Int, exact: Bool, text: String)? {
        switch type {
        case flags: (1, 1, false, "at least 1 byte")
        case incompleteUUID16, completeUUID16: (0, 2, false, "a multiple of 2 bytes")
        case incompleteUUID32, completeUUID32: (0, 4, false, "a multiple of 4 bytes")
        case incompleteUUID128, completeUUID128: (0, 16, false, "a multiple of 16 bytes")
        case txPowerLevel: (1, 1, true, "exactly 1 byte")
        case serviceData16: (2, 1, false, "at least 2 bytes (the UUID)")
        case serviceData32: (4, 1, false, "at least 4 bytes (the UUID)")
        case serviceData128: (16, 1, false, "at least 16 bytes (the UUID)")
        case manufacturerSpecific: (2, 1, false, "at least 2 bytes (the company id)")
        default: nil
        }
    }
}
