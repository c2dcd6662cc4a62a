/// A JSON string as written between its quotes, already checked by the reader (so `value` never
/// fails). It points into the reader's text and is valid as long as that text is.
public struct JSONString {
    /// The bytes between the quotes, escapes as written.
    public let bytes: UnsafeBufferPointer<UInt8>
    /// True when the string has at least one escape (`\n`, `\u00e9`, …).
    public let hasEscapes: Bool

    @inlinable
    init(_ bytes: UnsafeBufferPointer<UInt8>, hasEscapes: Bool) {
        self.bytes = bytes
        self.hasEscapes = hasEscapes
    }

    /// The string with its escapes decoded.
    @inlinable
    public var value: String {
        hasEscapes ? String(decoding: Self.unescape(bytes), as: UTF8.self) : String(decoding: bytes, as: UTF8.self)
    }

    /// True when the decoded string is exactly `name` (compared as UTF-8 bytes).
    @inlinable
    public func equals(_ name: StaticString) -> Bool {
        guard !hasEscapes else { return Self.unescape(bytes).elementsEqual(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)) }
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        let p = name.utf8Start
        for k in 0..<bytes.count where bytes[k] != p[k] { return false }
        return true
    }

    /// The UTF-8 bytes of a string whose escapes `JSONReader` has checked, with the escapes decoded.
    @usableFromInline
    static func unescape(_ s: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(s.count)
        var i = 0
        func hex(_ at: Int) -> UInt32 {
            var v: UInt32 = 0
            for k in at..<(at + 4) { v = v << 4 | UInt32(hexValue(s[k])!) }
            return v
        }
        while i < s.count {
            guard s[i] == 0x5C else {
                out.append(s[i])
                i += 1
                continue
            }
            switch s[i + 1] {
            case 0x62: out.append(0x08)
            case 0x66: out.append(0x0C)
            case 0x6E: out.append(0x0A)
            case 0x72: out.append(0x0D)
            case 0x74: out.append(0x09)
            case 0x75:
                var scalar = hex(i + 2)
                if (0xD800...0xDBFF).contains(scalar) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (hex(i + 8) - 0xDC00)
                    i += 6
                }
                appendUTF8(scalar, to: &out)
                i += 4
            default: out.append(s[i + 1])  // \" \\ \/
            }
            i += 2
        }
        return out
    }

    /// Appends the UTF-8 encoding of the Unicode scalar `v`.
    static func appendUTF8(_ v: UInt32, to out: inout [UInt8]) {
        switch v {
        case 0..<0x80:
            out.append(UInt8(v))
        case 0x80..<0x800:
            out.append(0xC0 | UInt8(v >> 6))
            out.append(0x80 | UInt8(v & 0x3F))
        case 0x800..<0x10000:
            out.append(0xE0 | UInt8(v >> 12))
            out.append(0x80 | UInt8(v >> 6 & 0x3F))
            out.append(0x80 | UInt8(v & 0x3F))
        default:
            out.append(0xF0 | UInt8(v >> 18))
            out.append(0x80 | UInt8(v >> 12 & 0x3F))
            out.append(0x80 | UInt8(v >> 6 & 0x3F))
            out.append(0x80 | UInt8(v & 0x3F))
        }
    }

    /// The value of one hex digit, or nil.
    @usableFromInline
    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }
}
