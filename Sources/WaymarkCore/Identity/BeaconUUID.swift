/// A 128-bit proximity UUID as used by iBeacon, stored as 16 bytes.
///
/// Parsing accepts the canonical 8-4-4-4-12 form in either case; the canonical output is lower case
/// with dashes, which is also what device ids use.
public struct BeaconUUID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        self.bytes = Array(bytes)
    }

    /// Parses `E2C56DB5-DFFB-48D2-B060-D0F5A71096E0` (case-insensitive, dashes required where shown).
    public init?(_ text: String) {
        let utf8 = Array(text.utf8)
        guard utf8.count == 36 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(16)
        var i = 0
        while i < 36 {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard utf8[i] == UInt8(ascii: "-") else { return nil }
                i += 1
                continue
            }
            guard let hi = Hex.nibble(utf8[i]), let lo = Hex.nibble(utf8[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        self.bytes = out
    }

    /// Lower case with dashes: `e2c56db5-dffb-48d2-b060-d0f5a71096e0`.
    public var description: String {
        var s = Hex.encode(bytes)
        for index in [8, 13, 18, 23] {
            s.insert("-", at: s.index(s.startIndex, offsetBy: index))
        }
        return s
    }

    public static func < (lhs: BeaconUUID, rhs: BeaconUUID) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}

/// Hex helpers shared by identities, decoders and wire formats.
public enum Hex {
    @inline(__always)
    public static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Lower-case hex of `bytes`, no separators.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes hex, ignoring ASCII white space and `:`/`-` separators. Nil on any other character
    /// or an odd number of digits.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count / 2)
        var pending: UInt8? = nil
        for c in text.utf8 {
            if c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == UInt8(ascii: ":") || c == UInt8(ascii: "-") {
                continue
            }
            guard let n = nibble(c) else { return nil }
            if let hi = pending {
                out.append(hi << 4 | n)
                pending = nil
            } else {
                pending = n
            }
        }
        return pending == nil ? out : nil
    }
}
