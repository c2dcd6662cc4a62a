/// Decimal to Double, correctly rounded (the Double nearest to the decimal, ties to even).
///
/// Most numbers in our files take a fast path: a decimal mantissa of at most 2^53 times a power of
/// ten of at most 10^22 is two exact Doubles, and one IEEE multiplication or division rounds once,
/// correctly. Longer decimals with a fraction (timestamps with sub-microsecond digits) are decided
/// exactly by `nearestDouble`; the rest go to the standard library's conversion.
public enum JSONNumber {
    /// The value of the number text `text` (the whole buffer, no white space), or nil when it is
    /// not a JSON number or is out of Double's range.
    public static func parse(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        guard let first = text.first, first == 0x2D || first &- 0x30 < 10 else { return nil }
        var reader = JSONReader(text)
        guard let value = try? reader.scanNumber(converting: true), reader.position == text.count else { return nil }
        return value
    }

    /// 10^k for k in 0…22, the powers of ten a Double holds exactly (a constant table, no global
    /// to initialise).
    @inlinable @inline(__always)
    static func powerOfTen(_ k: Int) -> Double {
        switch k {
        case 0: 1
        case 1: 1e1
        case 2: 1e2
        case 3: 1e3
        case 4: 1e4
        case 5: 1e5
        case 6: 1e6
        case 7: 1e7
        case 8: 1e8
        case 9: 1e9
        case 10: 1e10
        case 11: 1e11
        case 12: 1e12
        case 13: 1e13
        case 14: 1e14
        case 15: 1e15
        case 16: 1e16
        case 17: 1e17
        case 18: 1e18
        case 19: 1e19
        case 20: 1e20
        case 21: 1e21
        default: 1e22
        }
    }

    /// `m · 10^e` correctly rounded when a quick exact method applies, else nil.
    @inlinable @inline(__always)
    static func exact(_ m: UInt64, timesTenToThe e: Int) -> Double? {
        if m <= 1 << 53 {
            let d = Double(Int64(bitPattern: m))  // exact (and a quicker conversion than from UInt64)
            if e == 0 { return d }
            if e < 0 {
                if e >= -22 { return d / powerOfTen(-e) }
            } else if e <= 22 {
                return d * powerOfTen(e)
            }
            if m == 0 { return 0 }
        } else if e == 0 {
            return Double(m)  // the conversion of an integer rounds once
        }
        if e < 0 && e >= -18 { return nearestDouble(m, overPowerOfTen: -e) }
        return nil
    }

    /// The Double nearest to `m / 10^k`, or nil when this check cannot decide. A candidate
    /// `c = sig · 2^e` is the nearest exactly when `m / 10^k` lies strictly inside its rounding
    /// interval, `(2·sig − 1) · 10^k < m · 2^(1−e) < (2·sig + 1) · 10^k`, which 128-bit integers
    /// decide without rounding. The quotient computed in floating point is within two ulps, so one
    /// of it and its neighbours is the answer; halfway cases, powers of two (uneven intervals) and
    /// magnitudes that do not fit are left to `convert`.
    @usableFromInline
    static func nearestDouble(_ m: UInt64, overPowerOfTen k: Int) -> Double? {
        guard k >= 1, k <= 18, m > 0, m < 1 << 60 else { return nil }
        let p = UInt64(powerOfTen(k))  // exact: 10^18 < 2^63
        let estimate = Double(Int64(m)) / powerOfTen(k)
        /// Whether `c` is the answer: true, false, or nil when this check cannot decide.
        func isNearest(_ c: Double) -> Bool? {
            guard c.isNormal, c.significandBitPattern != 0 else { return nil }
            let sig = c.significandBitPattern | (1 << 52)
            let shift = 1 - (Int(c.exponent) - 52)
            guard shift >= 0, shift <= 64 else { return nil }
            let scaled = UInt128(m) << shift
            let low = UInt128(2 * sig - 1) * UInt128(p), high = UInt128(2 * sig + 1) * UInt128(p)
            if scaled == low || scaled == high { return nil }
            return scaled > low && scaled < high
        }
        switch isNearest(estimate) {
        case true?: return estimate
        case nil: return nil
        case false?: break
        }
        let down = estimate.nextDown
        switch isNearest(down) {
        case true?: return down
        case nil: return nil
        case false?: break
        }
        let up = estimate.nextUp
        return isNearest(up) == true ? up : nil
    }

    /// Any JSON number text the reader has checked, by the standard library's correctly rounded
    /// conversion (infinite when out of range, zero when too small).
    @usableFromInline
    static func convert(_ text: UnsafeBufferPointer<UInt8>) -> Double {
        Double(String(decoding: text, as: UTF8.self))!
    }
}
