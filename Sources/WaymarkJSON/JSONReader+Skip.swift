extension JSONReader {
    /// Skips any value (a member a reader does not use), checking it as strictly as a value that is
    /// read: what is skipped is JSON. Arrays and objects may nest `maxNesting` deep below it.
    @inlinable
    public mutating func skipValue() throws(JSONError) {
        skipWhitespace()
        guard position < bytes.count else { throw error("missing value") }
        switch bytes[position] {
        case 0x22: _ = try readString()
        case 0x7B, 0x5B: try skipContainer(depth: 0)
        case 0x74: try literal("true")
        case 0x66: try literal("false")
        case 0x6E: try literal("null")
        default: _ = try scanNumber(converting: false)
        }
    }

    /// Skips the array or object at `position`, `depth` levels below the value being skipped; its
    /// members or elements are one level deeper, which must be less than `maxNesting`.
    @usableFromInline
    mutating func skipContainer(depth: Int) throws(JSONError) {
        let isObject = bytes[position] == 0x7B
        position += 1
        var container = JSONContainer(close: isObject ? 0x7D : 0x5D)
        while try next(in: &container) {
            if isObject { _ = try readKey() }
            guard depth + 1 < maxNesting else { throw error("nesting too deep") }
            skipWhitespace()
            guard position < bytes.count else { throw error("missing value") }
            switch bytes[position] {
            case 0x7B, 0x5B: try skipContainer(depth: depth + 1)
            default: try skipValue()
            }
        }
    }
}
