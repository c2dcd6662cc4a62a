/// Where the reader is in an array or an object (see `JSONReader.next(in:)`).
public struct JSONContainer {
    /// `]` or `}`.
    @usableFromInline let close: UInt8
    @usableFromInline var first = true

    @inlinable
    init(close: UInt8) { self.close = close }
}

extension JSONReader {
    /// Consumes `{`; then call `next(in:)` before each member.
    @inlinable
    public mutating func openObject() throws(JSONError) -> JSONContainer {
        try expect(0x7B)
        return JSONContainer(close: 0x7D)
    }

    /// Consumes `[`; then call `next(in:)` before each element.
    @inlinable
    public mutating func openArray() throws(JSONError) -> JSONContainer {
        try expect(0x5B)
        return JSONContainer(close: 0x5D)
    }

    /// True when another member or element follows (consuming the comma before it), false when
    /// the container closes (consuming `}` or `]`).
    @inlinable
    public mutating func next(in container: inout JSONContainer) throws(JSONError) -> Bool {
        skipWhitespace()
        guard position < bytes.count else { throw unterminated(container) }
        let b = bytes[position]
        if b == container.close {
            position += 1
            return false
        }
        if container.first {
            container.first = false
            return true
        }
        guard b == 0x2C else { throw expectedComma(container) }
        position += 1
        return true
    }

    /// Reads a member's key and the `:` after it. With `allowingEscapes` false a key written with
    /// an escape is an error (for readers whose keys never need one).
    @inlinable
    public mutating func readKey(allowingEscapes: Bool = true) throws(JSONError) -> JSONString {
        let key = try readString(allowingEscapes: allowingEscapes)
        skipWhitespace()
        guard position < bytes.count, bytes[position] == 0x3A else { throw expectedColon(after: key) }
        position += 1
        return key
    }

    // The errors of the hot paths above, built out of line.

    @usableFromInline @inline(never)
    func unterminated(_ container: JSONContainer) -> JSONError {
        error("unterminated \(container.close == 0x7D ? "object" : "array")")
    }

    @usableFromInline @inline(never)
    func expectedComma(_ container: JSONContainer) -> JSONError {
        error("expected ',' or '\(Character(Unicode.Scalar(container.close)))'")
    }

    @usableFromInline @inline(never)
    func expectedColon(after key: JSONString) -> JSONError {
        error("expected ':' after \"\(key.value)\"")
    }
}
