extension JSONReader {
    /// Consumes `null` when it comes next (after white space).
    @inlinable
    public mutating func consumeNull() -> Bool {
        skipWhitespace()
        if position + 4 <= bytes.count, bytes[position] == 0x6E, bytes[position + 1] == 0x75,
           bytes[position + 2] == 0x6C, bytes[position + 3] == 0x6C {
            position += 4
            return true
        }
        return false
    }

    /// Reads `true` or `false`.
    @inlinable
    public mutating func readBool() throws(JSONError) -> Bool {
        switch peek() {
        case 0x74: try literal("true"); return true
        case 0x66: try literal("false"); return false
        default: throw error("expected true or false")
        }
    }

    /// Reads `null`.
    @inlinable
    public mutating func readNull() throws(JSONError) {
        skipWhitespace()
        try literal("null")
    }

    /// Consumes the ASCII `word` at the current position or fails with `unknown literal`.
    @inlinable
    mutating func literal(_ word: StaticString) throws(JSONError) {
        let n = word.utf8CodeUnitCount
        guard position + n <= bytes.count else { throw error("unknown literal") }
        let p = word.utf8Start
        for k in 0..<n where bytes[position + k] != p[k] { throw error("unknown literal") }
        position += n
    }
}
