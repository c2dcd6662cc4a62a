extension JSONReader {
    /// Reads a number as RFC 8259 writes it, `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`,
    /// as the correctly rounded Double. A number Double cannot hold (`1e400`) is an error
    /// (`numberOutOfRange`); one too small for it reads as zero, as strtod reads it.
    @inlinable
    public mutating func readNumber() throws(JSONError) -> Double {
        skipWhitespace()
        return try scanNumber(converting: true)
    }

    /// Reads a number at `position`. Without `converting` only the grammar and the range are
    /// checked and the result is meaningless (for values that are skipped).
    @inlinable
    mutating func scanNumber(converting: Bool) throws(JSONError) -> Double {
        let start = position
        var mantissa: UInt64 = 0
        var digits = 0  // of the integer and the fraction; the first 19 are in `mantissa`
        var negative = false
        if position < bytes.count, bytes[position] == 0x2D {
            negative = true
            position += 1
        }
        let integerStart = position
        while position < bytes.count {
            let d = bytes[position] &- 0x30
            guard d < 10 else { break }
            if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(d) }
            digits += 1
            position += 1
        }
        let integerDigits = position - integerStart
        guard integerDigits > 0 else { throw error(negative ? "bad number (expected a digit after '-')" : "expected a number") }
        guard integerDigits == 1 || bytes[integerStart] != 0x30 else { throw error("bad number (leading zero)") }
        var fraction = 0
        if position < bytes.count, bytes[position] == 0x2E {
            position += 1
            let fractionStart = position
            while position < bytes.count {
                let d = bytes[position] &- 0x30
                guard d < 10 else { break }
                if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(d) }
                digits += 1
                position += 1
            }
            fraction = position - fractionStart
            guard fraction > 0 else { throw error("bad number (expected a digit after '.')") }
        }
        var exponent = 0
        var hasExponent = false
        if position < bytes.count, bytes[position] | 0x20 == 0x65 {
            hasExponent = true
            position += 1
            var negativeExponent = false
            if position < bytes.count, bytes[position] == 0x2B || bytes[position] == 0x2D {
                negativeExponent = bytes[position] == 0x2D
                position += 1
            }
            let exponentStart = position
            while position < bytes.count {
                let d = bytes[position] &- 0x30
                guard d < 10 else { break }
                if exponent < 100_000 { exponent = exponent * 10 + Int(d) }
                position += 1
            }
            guard position > exponentStart else { throw error("bad number (expected a digit in the exponent)") }
            if negativeExponent { exponent = -exponent }
        }
        // Only an exponent or more than 308 integer digits can take a number out of Double's range.
        if !converting && !hasExponent && integerDigits <= 308 { return 0 }
        if digits <= 19, let v = JSONNumber.exact(mantissa, timesTenToThe: exponent - fraction) {
            return negative ? -v : v
        }
        let v = JSONNumber.convert(UnsafeBufferPointer(rebasing: bytes[start..<position]))
        guard v.isFinite else { throw JSONError(.numberOutOfRange, "number out of range", offset: start) }
        return v
    }
}
