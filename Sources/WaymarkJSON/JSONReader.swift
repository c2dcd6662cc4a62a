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

    /// Checks that only white space follows the value read.
    @inlinable
    public mutating func expectEnd() throws(JSONError) {
        skipWhitespace()
        guard position == bytes.count else { throw error("text after the value") }
    }
}
