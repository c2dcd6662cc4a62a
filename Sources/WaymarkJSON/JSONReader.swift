/// A forward-only reader over the bytes of one JSON text (RFC 8259): it reads values in place,
/// without building a tree, so a caller maps the members it knows straight into its own types and
/// skips the others. What it accepts is exactly JSON: `JSONAgreementTests` fuzzes it against
/// Foundation's `JSONSerialization`.
///
/// ```swift
/// var reader = JSONReader(buffer)
/// var object = try reader.openObject()
/// while try reader.next(in: &object) {
///     let key = try reader.readKey()
///     if key.equals("t") { t = try reader.readNumber() } else { try reader.skipValue() }
/// }
/// try reader.expectEnd()
/// ```
///
/// Every read skips the white space before its value. The hot paths are `@inlinable`, so they are
/// compiled into the caller as if written there.
public struct JSONReader {
    /// The whole text; the reader never reads outside it.
    public let bytes: UnsafeBufferPointer<UInt8>
    /// The offset of the next byte to read.
    public var position = 0
    /// How deeply `skipValue()` lets arrays and objects nest below the value it skips (a bound on
    /// recursion for hostile input).
    public var maxNesting: Int

    /// A reader at the start of `bytes`, which must stay valid while the reader is used.
    @inlinable
    public init(_ bytes: UnsafeBufferPointer<UInt8>, maxNesting: Int = 64) {
        self.bytes = bytes
        self.maxNesting = maxNesting
    }

    /// An error at the current position.
    @inlinable
    public func error(_ message: String, _ kind: JSONError.Kind = .syntax) -> JSONError {
        JSONError(kind, message, offset: position)
    }

    /// `expected 'X'` at the current position (out of line: the hot paths only branch to it).
    @usableFromInline @inline(never)
    func expected(_ byte: UInt8) -> JSONError {
        error("expected '\(Character(Unicode.Scalar(byte)))'")
    }

    /// Skips insignificant white space (space, tab, line feed, carriage return).
    @inlinable @inline(__always)
    public mutating func skipWhitespace() {
        while position < bytes.count {
            let b = bytes[position]
            guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { return }
            position += 1
        }
    }

    /// The next byte after white space, without consuming it; nil at the end of the text.
    @inlinable
    public mutating func peek() -> UInt8? {
        skipWhitespace()
        return position < bytes.count ? bytes[position] : nil
    }

    /// Consumes `byte` (after white space) or fails with `expected 'X'`.
    @inlinable
    public mutating func expect(_ byte: UInt8) throws(JSONError) {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else { throw expected(byte) }
        position += 1
    }

    /// Consumes `byte` when it comes next (after white space).
    @inlinable
    public mutating func consume(_ byte: UInt8) -> Bool {
        skipWhitespace()
        if position < bytes.count, bytes[position] == byte {
            position += 1
            return true
        }
        return false
    }

    /// Checks that only white space follows the value read.
    @inlinable
    public mutating func expectEnd() throws(JSONError) {
        skipWhitespace()
        guard position == bytes.count else { throw error("text after the value") }
    }
}

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
