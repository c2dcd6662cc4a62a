/// The top-level members of one JSON object text (a JSONL line, say), checked and indexed: every
/// value, nested arrays and objects included, is checked as `JSONReader` checks it, and each
/// member's key and value are kept as bytes of the text, so a reader can look up the few keys it
/// needs without building a tree. Of a key given twice the last value counts, as in Foundation.
public struct JSONObjectIndex {
    /// One member: its key and its value as written.
    public struct Member {
        public var key: JSONString
        public var value: UnsafeBufferPointer<UInt8>
    }

    /// The text, which must stay valid while the index is used.
    public let bytes: UnsafeBufferPointer<UInt8>
    /// The members in the order written.
    public private(set) var members: [Member]

    /// Indexes `bytes`, which must be one object and nothing else but white space. `reusing` lends
    /// the storage of an index that is no longer needed.
    public init(_ bytes: UnsafeBufferPointer<UInt8>, reusing storage: [Member] = []) throws(JSONError) {
        self.bytes = bytes
        members = storage
        members.removeAll(keepingCapacity: true)
        var reader = JSONReader(bytes)
        var object = try reader.openObject()
        while try reader.next(in: &object) {
            let key = try reader.readKey()
            reader.skipWhitespace()
            let start = reader.position
            try reader.skipValue()
            members.append(Member(key: key, value: UnsafeBufferPointer(rebasing: bytes[start..<reader.position])))
        }
        try reader.expectEnd()
    }

    /// The value of `key` as written (the last one when the key is given twice), or nil when absent.
    public func raw(_ key: StaticString) -> UnsafeBufferPointer<UInt8>? {
        for m in members.reversed() where m.key.equals(key) { return m.value }
        return nil
    }

    /// True when `key` is present with the value `null`.
    public func isNull(_ key: StaticString) -> Bool {
        guard let r = raw(key) else { return false }
        return r.count == 4 && r[0] == 0x6E
    }

    /// The contents of a string value without its quotes (escapes as written), or nil.
    public func stringBytes(_ key: StaticString) -> UnsafeBufferPointer<UInt8>? {
        guard let r = raw(key), r.count >= 2, r[0] == 0x22 else { return nil }
        return UnsafeBufferPointer(rebasing: r[1..<(r.count - 1)])
    }

    /// A string value with its escapes decoded, or nil when absent or not a string.
    public func string(_ key: StaticString) -> String? {
        guard let s = stringBytes(key) else { return nil }
        guard s.contains(0x5C) else { return String(decoding: s, as: UTF8.self) }
        return String(decoding: JSONString.unescape(s), as: UTF8.self)
    }

    /// A number value, or nil when absent or not a number.
    public func number(_ key: StaticString) -> Double? {
        raw(key).flatMap(JSONNumber.parse)
    }

    /// A boolean value, or nil when absent or not `true` or `false`.
    public func bool(_ key: StaticString) -> Bool? {
        guard let r = raw(key) else { return nil }
        if r.elementsEqual("true".utf8) { return true }
        if r.elementsEqual("false".utf8) { return false }
        return nil
    }
}
