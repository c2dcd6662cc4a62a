/// A Bluetooth device address with the address type the controller reported.
///
/// `value` holds the 48 bits with the most significant byte first in the usual printed form, so
/// `description` is `aa:bb:cc:dd:ee:ff` exactly as BlueZ prints it. (HCI carries the six bytes least
/// significant first; the decoder reverses them.)
public struct BluetoothAddress: Hashable, Sendable, CustomStringConvertible {
    /// The address as a 48-bit number (upper 16 bits zero).
    public let value: UInt64
    /// What the controller said about the address.
    public let type: AddressType

    public init(value: UInt64, type: AddressType) {
        self.value = value & 0xFFFF_FFFF_FFFF
        self.type = type
    }

    /// `bytes` most significant first, as printed (`aa:bb:…` → `[0xaa, 0xbb, …]`). Nil unless 6 bytes.
    public init?(bytes: some Collection<UInt8>, type: AddressType) {
        guard bytes.count == 6 else { return nil }
        self.init(value: bytes.reduce(0) { $0 << 8 | UInt64($1) }, type: type)
    }

    /// The six bytes, most significant first.
    public var bytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: value >> (8 * (5 - $0))) }
    }

    /// Lower-case, colon-separated, most significant byte first.
    public var description: String {
        var out: [UInt8] = []
        out.reserveCapacity(17)
        for i in 0..<6 {
            let byte = UInt8(truncatingIfNeeded: value >> (8 * (5 - i)))
            if i > 0 { out.append(UInt8(ascii: ":")) }
            out.append(hexDigit(byte >> 4))
            out.append(hexDigit(byte & 0x0F))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// What kind of address this is, from the type and, for random addresses, the two most
    /// significant bits (Core spec Vol 6 Part B §1.3).
    public var kind: AddressKind {
        switch type.rawValue {
        case 0x00: return .public
        case 0x02: return .publicIdentity
        case 0x03: return .randomStaticIdentity
        case 0xFF: return .anonymous
        case 0x01:
            switch value >> 46 {
            case 0b11: return .randomStatic
            case 0b01: return .resolvablePrivate
            case 0b00: return .nonResolvablePrivate
            default: return .reservedRandom
            }
        default: return .unknown
        }
    }
}

/// The address type byte of an advertising report.
public struct AddressType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let `public` = AddressType(rawValue: 0x00)
    public static let random = AddressType(rawValue: 0x01)
    /// A resolvable private address the controller resolved to a public identity address.
    public static let publicIdentity = AddressType(rawValue: 0x02)
    /// A resolvable private address the controller resolved to a static random identity address.
    public static let randomIdentity = AddressType(rawValue: 0x03)
    /// Extended advertising without an address.
    public static let anonymous = AddressType(rawValue: 0xFF)

    public var description: String {
        switch rawValue {
        case 0x00: "public"
        case 0x01: "random"
        case 0x02: "public-identity"
        case 0x03: "random-identity"
        case 0xFF: "anonymous"
        default: "reserved(\(rawValue))"
        }
    }
}

/// The kind of a device address, which says whether it identifies a device over time.
public enum AddressKind: String, Hashable, Sendable {
    /// An IEEE-assigned public address: stable.
    case `public`
    /// A static random address: stable until the device power-cycles (usually for its lifetime).
    case randomStatic = "random-static"
    /// A resolvable private address: rotates (typically every 15 min); not stable.
    case resolvablePrivate = "resolvable-private"
    /// A non-resolvable private address: rotates; not stable.
    case nonResolvablePrivate = "non-resolvable-private"
    /// A random address with the reserved top bits `10`.
    case reservedRandom = "reserved-random"
    /// A public identity address the controller resolved from a private address: stable.
    case publicIdentity = "public-identity"
    /// A static random identity address the controller resolved from a private address: stable.
    case randomStaticIdentity = "random-static-identity"
    /// No address was sent (extended advertising).
    case anonymous
    /// An address type value the specification reserves.
    case unknown

    /// True when the address names the same device over time, so it may serve as a `mac:` id.
    public var isStable: Bool {
        switch self {
        case .public, .randomStatic, .publicIdentity, .randomStaticIdentity: true
        default: false
        }
    }
}

@inline(__always)
func hexDigit(_ nibble: UInt8) -> UInt8 {
    nibble < 10 ? nibble + 0x30 : nibble + 0x57
}
