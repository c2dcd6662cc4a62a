extension JSONReader {
    /// Reads a string, checked as JSON requires (escapes, surrogate pairs, no control characters,
    /// valid UTF-8), and returns it as written; `value` decodes it. With `allowingEscapes` false
    /// any escape is an error (for ids and other text that never needs one).
    @inlinable
    public mutating func readString(allowingEscapes: Bool = true) throws(JSONError) -> JSONString {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == 0x22 else { throw expected(0x22) }
        position += 1
        let start = position
        var high: UInt8 = 0
        var escapes = false
        while true {
            skipPlainASCII()
            guard position < bytes.count else { break }
            let b = bytes[position]
            if b == 0x22 {
                let content = UnsafeBufferPointer(rebasing: bytes[start..<position])
                if high >= 0x80, !UTF8Validation.isValid(content) {
                    throw error("string is not valid UTF-8", .invalidUTF8)
                }
                position += 1
                return JSONString(content, hasEscapes: escapes)
            }
            guard b >= 0x20 else { throw error("control character in a string (write it as \\u00XX)") }
            high |= b
            if b == 0x5C {
                guard allowingEscapes else { throw error("escape in a string that must be written without one") }
                escapes = true
                try skipEscape()
            }
            position += 1
        }
        throw error("unterminated string")
    }

    /// Skips, eight bytes at a time, string bytes that need no attention: printable ASCII other
    /// than `"` and `\`. Stops at (or up to seven bytes before) the first byte that does.
    @inlinable @inline(__always)
    mutating func skipPlainASCII() {
        guard let base = bytes.baseAddress else { return }
        while position + 8 <= bytes.count {
            let w = UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self)
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            // A byte is zero in `x` exactly when `(x - 1) & ~x` sets its high bit (no false negatives
            // for the word as a whole); `w - 0x20…` does the same for bytes below 0x20.
            let quote = w ^ (0x22 &* ones), backslash = w ^ (0x5C &* ones)
            let special = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((w &- 0x20 &* ones) & ~w) | w
            if special & highs != 0 { return }
            position += 8
        }
    }

    /// Checks the escape at the backslash under `position` and leaves `position` on its last byte.
    @usableFromInline
    mutating func skipEscape() throws(JSONError) {
        position += 1
        guard position < bytes.count else { throw error("unterminated string") }
        switch bytes[position] {
        case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74:
            return
        case 0x75:
            let unit = try hex4()
            if (0xD800...0xDBFF).contains(unit) {
                // A high surrogate must be followed by an escaped low one: together one scalar.
                guard position + 2 < bytes.count, bytes[position + 1] == 0x5C, bytes[position + 2] == 0x75 else {
                    throw error("unpaired surrogate in a \\u escape")
                }
                position += 2
                guard (0xDC00...0xDFFF).contains(try hex4()) else { throw error("unpaired surrogate in a \\u escape") }
            } else if (0xDC00...0xDFFF).contains(unit) {
                throw error("unpaired surrogate in a \\u escape")
            }
        default:
            throw error("bad escape in a string")
        }
    }

    /// The four hex digits after `\u` (`position` at the `u`); leaves `position` on the last digit.
    private mutating func hex4() throws(JSONError) -> UInt32 {
        guard position + 4 < bytes.count else { throw error("\\u escape needs four hex digits") }
        var v: UInt32 = 0
        for k in 1...4 {
            guard let d = JSONString.hexValue(bytes[position + k]) else { throw error("\\u escape needs four hex digits") }
            v = v << 4 | UInt32(d)
        }
        position += 4
        return v
    }
}
