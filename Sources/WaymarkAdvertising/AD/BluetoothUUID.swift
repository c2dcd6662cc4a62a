/// A Bluetooth UUID (16-, 32- or 128-bit), stored as its full 128-bit value.
///
/// 16- and 32-bit UUIDs are aliases in the Bluetooth base UUID
/// `0000xxxx-0000-1000-8000-00805f9b34fb`; `description` always prints the full lower-case form.
public struct BluetoothUUID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The most and least significant 64 bits.
    public let high: UInt64
    public let low: UInt64

    static let baseHighLow: UInt64 = 0x0000_1000
    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A 16-bit UUID such as 0xFEAA (Eddystone).
    public init(uuid16: UInt16) { self.init(uuid32: UInt32(uuid16)) }

    /// A 32-bit UUID.
    public init(uuid32: UInt32) {
        self.init(high: UInt64(uuid32) << 32 | Self.baseHighLow, low: Self.baseLow)
    }

    /// `bytes` in the order they are printed (most significant first). Nil unless 16 bytes.
    public init?(bigEndianBytes bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        let all = Array(bytes)
        self.init(
            high: all[0..<8].reduce(0) { $0 << 8 | UInt64($1) },
            low: all[8..<16].reduce(0) { $0 << 8 | UInt64($1) })
    }

    /// The 16-bit alias, when this UUID is one.
    public var uuid16: UInt16? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHighLow, high >> 48 == 0 else { return nil }
        return UInt16(truncatingIfNeeded: high >> 32)
    }

    /// The 32-bit alias, when this UUID is one (16-bit UUIDs are also 32-bit ones).
    public var uuid32: UInt32? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHighLow else { return nil }
        return UInt32(truncatingIfNeeded: high >> 32)
    }

    /// The 16 bytes, most significant first.
    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (8 * (7 - $0))) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (8 * (7 - $0))) }
    }

    /// Lower case, 8-4-4-4-12.
    public var description: String {
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (i, b) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { out.append(UInt8(ascii: "-")) }
            out.append(hexDigit(b >> 4))
            out.append(hexDigit(b & 0x0F))
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func < (lhs: BluetoothUUID, rhs: BluetoothUUID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }

    /// Reads a UUID of `width` bytes (2, 4 or 16) stored least significant byte first, as AD
    /// structures carry them.
    static func read(_ bytes: Span<UInt8>, at p: Int, width: Int) -> BluetoothUUID {
        switch width {
        case 2: return BluetoothUUID(uuid16: UInt16(bytes[p]) | UInt16(bytes[p + 1]) << 8)
        case 4:
            var v: UInt32 = 0
            for i in (0..<4).reversed() { v = v << 8 | UInt32(bytes[p + i]) }
            return BluetoothUUID(uuid32: v)
        default:
            var low: UInt64 = 0
            var high: UInt64 = 0
            for i in (0..<8).reversed() { low = low << 8 | UInt64(bytes[p + i]) }
            for i in (8..<16).reversed() { high = high << 8 | UInt64(bytes[p + i]) }
            return BluetoothUUID(high: high, low: low)
        }
    }
}
