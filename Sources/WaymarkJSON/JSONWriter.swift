/// Writes JSON tokens as UTF-8 bytes: strings with escaping, integers, fixed-point and shortest
/// decimals, to a byte array or (for the hottest loops) straight into memory the caller reserved.
/// Compact, no white space; the structure (braces, commas, keys) is the caller's.
public enum JSONWriter {
    /// Appends the ASCII text `s` as it is (punctuation, keys known to need no escaping).
    @inlinable
    public static func appendRaw(_ s: StaticString, to out: inout [UInt8]) {
        s.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    /// Appends `s` as a JSON string with its quotes. `"`, `\`, line feed, carriage return and tab
    /// are escaped as `\"`, `\\`, `\n`, `\r`, `\t`, the other control characters and DEL as
    /// `\u00XX`; everything else, non-ASCII included, is written as it is.
    public static func appendString(_ s: String, to out: inout [UInt8]) {
        out.append(0x22)
        appendEscaped(s.utf8, to: &out)
        out.append(0x22)
    }

    /// Appends the escaped contents of a JSON string (no quotes), as `appendString` writes them.
    public static func appendEscaped(_ utf8: some Sequence<UInt8>, to out: inout [UInt8]) {
        for b in utf8 {
            switch b {
            case 0x22, 0x5C: out.append(0x5C); out.append(b)
            case 0x0A: out.append(0x5C); out.append(0x6E)
            case 0x0D: out.append(0x5C); out.append(0x72)
            case 0x09: out.append(0x5C); out.append(0x74)
            case 0..<0x20, 0x7F:
                out.append(contentsOf: [0x5C, 0x75, 0x30, 0x30])  // \u00
                out.append(upperHexDigit(b >> 4))
                out.append(upperHexDigit(b & 0x0F))
            default: out.append(b)
            }
        }
    }

    static func upperHexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x37 + nibble }

    /// Appends `value` in decimal.
    @inlinable
    public static func appendInteger(_ value: Int, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            let n = writeInteger(value, at: buffer.baseAddress!)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[0..<n]))
        }
    }

    /// Writes `value` in decimal at `p` and returns the number of bytes (at most 20).
    @inlinable @inline(__always)
    public static func writeInteger(_ value: Int, at p: UnsafeMutablePointer<UInt8>) -> Int {
        var i = 0
        if value < 0 {
            p[0] = 0x2D
            i = 1
        }
        var v = value.magnitude
        var digits = 0
        var probe = v
        repeat {
            digits += 1
            probe /= 10
        } while probe > 0
        var j = i + digits - 1
        repeat {
            p[j] = 0x30 + UInt8(v % 10)
            v /= 10
            j -= 1
        } while v > 0
        return i + digits
    }

    /// Appends `value` rounded to exactly three decimals, e.g. `1780304400.125` (seconds with
    /// milliseconds).
    @inlinable
    public static func appendMilli(_ value: Double, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
            let n = writeMilli(value, at: buffer.baseAddress!)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[0..<n]))
        }
    }

    /// Writes `value` rounded to exactly three decimals at `p` and returns the number of bytes
    /// (at most 24). `value · 1000` must fit in an Int.
    @inlinable @inline(__always)
    public static func writeMilli(_ value: Double, at p: UnsafeMutablePointer<UInt8>) -> Int {
        let ms = Int((value * 1000).rounded())
        var i = 0
        if ms < 0 {
            p[0] = 0x2D
            i = 1
        }
        let m = ms.magnitude
        i += writeInteger(Int(m / 1000), at: p + i)
        let frac = Int(m % 1000)
        p[i] = 0x2E
        p[i + 1] = 0x30 + UInt8(frac / 100)
        p[i + 2] = 0x30 + UInt8(frac / 10 % 10)
        p[i + 3] = 0x30 + UInt8(frac % 10)
        return i + 4
    }

    /// Appends `value` as the shortest decimal that reads back as the same Double; whole numbers
    /// below 10^15 without a fraction (`-3`, not `-3.0`), and `null` for infinities and NaN, which
    /// JSON cannot write.
    public static func appendDouble(_ value: Double, to out: inout [UInt8]) {
        if !value.isFinite {
            appendRaw("null", to: &out)
        } else if value.magnitude < 1e15, value == Double(Int(value)) {
            appendInteger(Int(value), to: &out)
        } else {
            out.append(contentsOf: value.description.utf8)
        }
    }
}
