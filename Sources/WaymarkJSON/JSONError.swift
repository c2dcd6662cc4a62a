/// Why a JSON text was not read: what is wrong and the byte offset where reading stopped.
public struct JSONError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem, for callers that sort rejections (a stored text that is not UTF-8 is
    /// told apart from a number out of range and from any other mistake).
    public enum Kind: Hashable, Sendable {
        /// Not JSON: a missing or unexpected character, a bad escape or literal, nesting too deep.
        case syntax
        /// A string that is not valid UTF-8.
        case invalidUTF8
        /// A number that is JSON but does not fit in a Double (such as `1e400`).
        case numberOutOfRange
    }

    public var kind: Kind
    /// What is wrong, e.g. `expected ',' or '}'`.
    public var message: String
    /// The byte offset in the text where the problem was found (0 is the first byte).
    public var offset: Int

    public init(_ kind: Kind, _ message: String, offset: Int) {
        self.kind = kind
        self.message = message
        self.offset = offset
    }

    public var description: String { "\(message) at byte \(offset)" }
}
