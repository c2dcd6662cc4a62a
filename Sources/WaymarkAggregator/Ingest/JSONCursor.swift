#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A forward-only reader over JSON bytes for the fixed shapes the aggregator receives. It reads
/// values in place (no intermediate tree), which is several times faster than `JSONDecoder` for
/// sighting batches (see `waymark-bench aggregator`). What it accepts is RFC 8259 JSON, skipped
/// members included: `BatchDecoderAgreementTests` fuzzes it against `JSONSerialization`.
struct JSONCursor {
    struct Failure: Error, CustomStringConvertible {
        var description: String
        /// The rejection this failure means (`badText` for invalid UTF-8, `outOfRange` for a value
        /// outside its field's range, `malformed` for everything else).
        var reason: RejectReason = .malformed
    }

    let bytes: UnsafeBufferPointer<UInt8>
    var i = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    func fail(_ what: String, _ reason: RejectReason = .malformed) -> Failure {
        Failure(description: "\(what) at byte \(i)", reason: reason)
    }

    mutating func skipSpace() {
        while i < bytes.count {
            let b = bytes[i]
            guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { return }
            i += 1
        }
    }

    /// Consumes `byte` (after white space) or fails.
    mutating func expect(_ byte: UInt8) throws(Failure) {
        skipSpace()
        guard i < bytes.count, bytes[i] == byte else { throw fail("expected '\(Character(Unicode.Scalar(byte)))'") }
        i += 1
    }

    /// Consumes `byte` when it comes next (after white space).
    mutating func consume(_ byte: UInt8) -> Bool {
        skipSpace()
        if i < bytes.count, bytes[i] == byte { i += 1; return true }
        return false
    }

    /// Reads `"key":` of an object member and returns the key's raw bytes (escapes not expected in
    /// the keys this reader looks for; a key with one is an error, as no known key needs one).
    mutating func key() throws(Failure) -> UnsafeBufferPointer<UInt8> {
        var ascii = true
        let k = try rawString(ascii: &ascii)
        if !ascii, String(validating: k, as: UTF8.self) == nil { throw fail("key is not valid UTF-8", .badText) }
        try expect(0x3A)
        return k
    }

    /// A string without decoding escapes (fast path for ids); fails on escapes, which no valid id
    /// has. `ascii` is cleared when the string has a byte of 0x80 or more.
    mutating func rawString(ascii: inout Bool) throws(Failure) -> UnsafeBufferPointer<UInt8> {
        try expect(0x22)
        let start = i
        var high: UInt8 = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x22 {
                let s = UnsafeBufferPointer(rebasing: bytes[start..<i])
                i += 1
                if high >= 0x80 { ascii = false }
                return s
            }
            if b == 0x5C || b < 0x20 { throw fail("escape or control character in a string") }
            high |= b
            i += 1
        }
        throw fail("unterminated string")
    }

    /// A string member, which must be valid UTF-8: invalid bytes are an error (`badText`), never
    /// replaced, since the text may be stored.
    mutating func string() throws(Failure) -> String {
        var ascii = true
        let raw = try rawString(ascii: &ascii)
        // Fast path (ids are ASCII): ASCII is valid UTF-8, and String(decoding:) is quicker than String(validating:).
        if ascii { return String(decoding: raw, as: UTF8.self) }
        guard let s = String(validating: raw, as: UTF8.self) else { throw fail("string is not valid UTF-8", .badText) }
        return s
    }

    /// Exact powers of ten for the decimal fast path of `number()`.
    static let powersOfTen: [Double] = (0...22).map { k in (0..<k).reduce(1.0) { r, _ in r * 10 } }

    /// A JSON number as Double, correctly rounded: integers and plain decimals of up to 15 digits
    /// are converted directly (an exact mantissa divided by an exact power of ten rounds once, so
    /// the result is the correctly rounded value), everything else via strtod. The text must be a
    /// number as RFC 8259 writes it, `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`, and fit
    /// in a Double (`1e400` is out of range).
    mutating func number() throws(Failure) -> Double {
        skipSpace()
        let start = i
        var mantissa: Int64 = 0
        var digits = 0
        var negative = false
        if i < bytes.count, bytes[i] == 0x2D { negative = true; i += 1 }
        let integerStart = i
        while i < bytes.count, bytes[i] &- 0x30 < 10 {
            if digits < 18 { mantissa = mantissa * 10 + Int64(bytes[i] &- 0x30) }
            digits += 1
            i += 1
        }
        guard digits > 0 else { throw fail(negative ? "expected a digit after '-'" : "expected a number") }
        guard digits == 1 || bytes[integerStart] != 0x30 else { throw fail("number with a leading zero") }
        var fraction = 0
        if i < bytes.count, bytes[i] == 0x2E {
            i += 1
            while i < bytes.count, bytes[i] &- 0x30 < 10 {
                if digits < 18 { mantissa = mantissa * 10 + Int64(bytes[i] &- 0x30) }
                digits += 1
                fraction += 1
                i += 1
            }
            guard fraction > 0 else { throw fail("expected a digit after '.'") }
        }
        var exponent = false
        if i < bytes.count, bytes[i] == 0x65 || bytes[i] == 0x45 {
            exponent = true
            i += 1
            if i < bytes.count, bytes[i] == 0x2B || bytes[i] == 0x2D { i += 1 }
            let exponentStart = i
            while i < bytes.count, bytes[i] &- 0x30 < 10 { i += 1 }
            guard i > exponentStart else { throw fail("expected a digit in the exponent") }
        }
        if !exponent && digits <= 18 {
            if fraction == 0 && digits <= 15 { return negative ? -Double(mantissa) : Double(mantissa) }
            if fraction >= 1 {
                if digits <= 15 {
                    let v = Double(mantissa) / Self.powersOfTen[fraction]
                    return negative ? -v : v
                }
                // 16–18 digits (timestamps with sub-microsecond digits): checked exactly.
                if let v = Self.nearestDouble(UInt64(mantissa), overPowerOfTen: fraction) { return negative ? -v : v }
            }
        }
        let length = i - start
        guard length < 64 else { throw fail("number too long") }
        let value = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buf in
            for k in 0..<length { buf[k] = CChar(bitPattern: bytes[start + k]) }
            buf[length] = 0
            return strtod(buf.baseAddress!, nil)
        }
        guard value.isFinite else { throw fail("number out of range", .outOfRange) }
        return value
    }

    /// The double nearest to `m / 10^k`, or nil when this quick check cannot decide (then strtod
    /// does). A candidate `c = sig · 2^e` is the nearest exactly when `m / 10^k` lies strictly
    /// inside its rounding interval, `(2·sig − 1) · 10^k < m · 2^(1−e) < (2·sig + 1) · 10^k`,
    /// which 128-bit integers decide without rounding. The quotient computed in floating point is
    /// within two ulps, so one of it and its neighbours is the answer; halfway cases, powers of two
    /// (uneven intervals) and magnitudes that do not fit are left to strtod.
    static func nearestDouble(_ m: UInt64, overPowerOfTen k: Int) -> Double? {
        guard k >= 1, k <= 18, m > 0, m < 1 << 60 else { return nil }
        var p: UInt64 = 1
        for _ in 0..<k { p *= 10 }
        let estimate = Double(m) / powersOfTen[k]
        for c in [estimate, estimate.nextDown, estimate.nextUp] {
            guard c.isNormal, c.significandBitPattern != 0 else { return nil }
            let sig = c.significandBitPattern | (1 << 52)
            let shift = 1 - (Int(c.exponent) - 52)
            guard shift >= 0, shift <= 64 else { return nil }
            let scaled = UInt128(m) << shift
            let low = UInt128(2 * sig - 1) * UInt128(p), high = UInt128(2 * sig + 1) * UInt128(p)
            if scaled == low || scaled == high { return nil }
            if scaled > low && scaled < high { return c }
        }
        return nil
    }

    /// `null` when it comes next.
    mutating func null() -> Bool {
        skipSpace()
        if i + 4 <= bytes.count, bytes[i] == 0x6E, bytes[i + 1] == 0x75, bytes[i + 2] == 0x6C, bytes[i + 3] == 0x6C {
            i += 4
            return true
        }
        return false
    }

    /// Skips any JSON value (for members added by newer senders), checking it as strictly as the
    /// members that are read: what is accepted is JSON.
    mutating func skipValue(depth: Int = 0) throws(Failure) {
        guard depth < 32 else { throw fail("nesting too deep") }
        skipSpace()
        guard i < bytes.count else { throw fail("missing value") }
        switch bytes[i] {
        case 0x22:
            try skipString()
        case 0x7B, 0x5B:
            let close: UInt8 = bytes[i] == 0x7B ? 0x7D : 0x5D
            let isObject = bytes[i] == 0x7B
            i += 1
            if consume(close) { return }
            repeat {
                if isObject {
                    skipSpace()
                    guard i < bytes.count, bytes[i] == 0x22 else { throw fail("expected '\"'") }
                    try skipString()
                    try expect(0x3A)
                }
                try skipValue(depth: depth + 1)
            } while consume(0x2C)
            try expect(close)
        case 0x74: try literal("true")
        case 0x66: try literal("false")
        case 0x6E: try literal("null")
        default:
            _ = try number()
        }
    }

    /// Consumes the ASCII `word` or fails.
    private mutating func literal(_ word: StaticString) throws(Failure) {
        let n = word.utf8CodeUnitCount
        guard i + n <= bytes.count else { throw fail("unknown literal") }
        let p = word.utf8Start
        for k in 0..<n where bytes[i + k] != p[k] { throw fail("unknown literal") }
        i += n
    }

    /// Skips a string with any escapes (at its opening quote), checking the escapes, control
    /// characters and UTF-8 as JSON requires.
    private mutating func skipString() throws(Failure) {
        i += 1
        let start = i
        var high: UInt8 = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x22 {
                if high >= 0x80, String(validating: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self) == nil {
                    throw fail("string is not valid UTF-8", .badText)
                }
                i += 1
                return
            }
            guard b >= 0x20 else { throw fail("control character in a string") }
            high |= b
            if b == 0x5C {
                i += 1
                guard i < bytes.count else { break }
                switch bytes[i] {
                case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74: break
                case 0x75:
                    let unit = try hex4()
                    if (0xD800...0xDBFF).contains(unit) {
                        guard i + 2 < bytes.count, bytes[i + 1] == 0x5C, bytes[i + 2] == 0x75 else { throw fail("unpaired surrogate in a \\u escape") }
                        i += 2
                        guard (0xDC00...0xDFFF).contains(try hex4()) else { throw fail("unpaired surrogate in a \\u escape") }
                    } else if (0xDC00...0xDFFF).contains(unit) {
                        throw fail("unpaired surrogate in a \\u escape")
                    }
                default: throw fail("bad escape in a string")
                }
            }
            i += 1
        }
        throw fail("unterminated string")
    }

    /// The four hex digits after `\u` (at the `u`); leaves `i` at the last digit.
    private mutating func hex4() throws(Failure) -> UInt32 {
        guard i + 4 < bytes.count else { throw fail("\\u escape needs four hex digits") }
        var v: UInt32 = 0
        for k in 1...4 {
            let c = bytes[i + k]
            let d: UInt8
            switch c {
            case 0x30...0x39: d = c - 0x30
            case 0x41...0x46: d = c - 0x41 + 10
            case 0x61...0x66: d = c - 0x61 + 10
            default: throw fail("\\u escape needs four hex digits")
            }
            v = v << 4 | UInt32(d)
        }
        i += 4
        return v
    }

    /// True when `key` equals the ASCII `name`.
    static func equals(_ key: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        guard key.count == name.utf8CodeUnitCount else { return false }
        let p = name.utf8Start
        for k in 0..<key.count where key[k] != p[k] { return false }
        return true
    }
}
