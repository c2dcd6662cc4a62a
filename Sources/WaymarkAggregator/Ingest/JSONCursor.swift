#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A forward-only reader over JSON bytes for the fixed shapes the aggregator receives. It reads
/// values in place (no intermediate tree), which is several times faster than `JSONDecoder` for
/// sighting batches (see `waymark-bench aggregator`).
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

    /// Reads `"key":` of an object member and returns the key's raw bytes (escapes not expected in keys).
    mutating func key() throws(Failure) -> UnsafeBufferPointer<UInt8> {
        let k = try rawString()
        try expect(0x3A)
        return k
    }

    /// A string without decoding escapes (fast path for ids); fails on escapes, which no valid id has.
    mutating func rawString() throws(Failure) -> UnsafeBufferPointer<UInt8> {
        try expect(0x22)
        let start = i
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x22 {
                let s = UnsafeBufferPointer(rebasing: bytes[start..<i])
                i += 1
                return s
            }
            if b == 0x5C || b < 0x20 { throw fail("escape or control character in a string") }
            i += 1
        }
        throw fail("unterminated string")
    }

    /// A string member, which must be valid UTF-8: invalid bytes are an error (`badText`), never
    /// replaced, since the text may be stored.
    mutating func string() throws(Failure) -> String {
        let raw = try rawString()
        // Fast path (ids are ASCII): ASCII is valid UTF-8, and String(decoding:) is quicker than String(validating:).
        var ascii = true
        for b in raw where b >= 0x80 { ascii = false; break }
        if ascii { return String(decoding: raw, as: UTF8.self) }
        guard let s = String(validating: raw, as: UTF8.self) else { throw fail("string is not valid UTF-8", .badText) }
        return s
    }

    /// Exact powers of ten for the decimal fast path of `number()`.
    static let powersOfTen: [Double] = (0...22).map { k in (0..<k).reduce(1.0) { r, _ in r * 10 } }

    /// A JSON number as Double, correctly rounded: integers and plain decimals of up to 15 digits
    /// are converted directly (an exact mantissa divided by an exact power of ten rounds once, so
    /// the result is the correctly rounded value), everything else via strtod.
    mutating func number() throws(Failure) -> Double {
        skipSpace()
        let start = i
        var mantissa: Int64 = 0
        var digits = 0, fraction = 0, dots = 0
        var other = false
        var negative = false
        if i < bytes.count, bytes[i] == 0x2D { negative = true; i += 1 }
        while i < bytes.count {
            let b = bytes[i]
            if b >= 0x30 && b <= 0x39 {
                if digits < 18 { mantissa = mantissa * 10 + Int64(b - 0x30) }
                digits += 1
                if dots > 0 { fraction += 1 }
            } else if b == 0x2E {
                dots += 1
            } else if b == 0x65 || b == 0x45 || b == 0x2B || b == 0x2D {
                other = true
            } else {
                break
            }
            i += 1
        }
        guard i > start + (negative ? 1 : 0) else { throw fail("expected a number") }
        if !other && digits <= 18 {
            if dots == 0 && digits <= 15 { return negative ? -Double(mantissa) : Double(mantissa) }
            if dots == 1 && fraction >= 1 && digits > fraction {
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
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buf in
            for k in 0..<length { buf[k] = CChar(bitPattern: bytes[start + k]) }
            buf[length] = 0
            return strtod(buf.baseAddress!, nil)
        }
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

    /// Skips any JSON value (for members added by newer senders).
    mutating func skipValue(depth: Int = 0) throws(Failure) {
        guard depth < 32 else { throw fail("nesting too deep") }
        skipSpace()
        guard i < bytes.count else { throw fail("missing value") }
        switch bytes[i] {
        case 0x22:
            i += 1
            while i < bytes.count, bytes[i] != 0x22 { i += bytes[i] == 0x5C ? 2 : 1 }
            guard i < bytes.count else { throw fail("unterminated string") }
            i += 1
        case 0x7B, 0x5B:
            let close: UInt8 = bytes[i] == 0x7B ? 0x7D : 0x5D
            let isObject = bytes[i] == 0x7B
            i += 1
            if consume(close) { return }
            repeat {
                if isObject { _ = try key() }
                try skipValue(depth: depth + 1)
            } while consume(0x2C)
            try expect(close)
        default:
            while i < bytes.count {
                let b = bytes[i]
                if b == 0x2C || b == 0x7D || b == 0x5D || b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { break }
                i += 1
            }
        }
    }

    /// True when `key` equals the ASCII `name`.
    static func equals(_ key: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        guard key.count == name.utf8CodeUnitCount else { return false }
        let p = name.utf8Start
        for k in 0..<key.count where key[k] != p[k] { return false }
        return true
    }
}
