/// Decodes what `CompactBinaryEncoder` wrote. Fails with `DecodingError.dataCorrupted` when the
/// bytes are truncated or not in the format, and when the type no longer has the shape the bytes
/// were written with (the fingerprint differs): a checkpoint of an older engine version is then
/// refused rather than read into the wrong fields.
public struct CompactBinaryDecoder: Sendable {
    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try decode(type, from: bytes[...])
    }

    /// Decodes one value that must fill `bytes` exactly.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: ArraySlice<UInt8>) throws -> T {
        let source = CompactBinarySource(bytes)
        guard bytes.count >= CompactBinaryFormat.headerSize, try source.byte() == CompactBinaryFormat.magic else {
            throw source.corrupt("not in the compact binary format (no header)")
        }
        let version = try source.byte()
        guard CompactBinaryFormat.readable.contains(version) else {
            throw source.corrupt("compact binary format version \(version); this build reads versions \(CompactBinaryFormat.readable.lowerBound)–\(CompactBinaryFormat.readable.upperBound)")
        }
        source.version = version
        let expected = try source.fixed(UInt64.self)
        let value = try source.decodeValue(type)
        guard source.offset == source.end else { throw source.corrupt("\(source.end - source.offset) bytes left over") }
        guard !source.fieldsLeft.contains(where: { $0 != 0 }) else {
            throw source.corrupt("\(T.self) no longer reads every field the bytes hold (fields removed since)")
        }
        guard source.fingerprint == expected else {
            throw source.corrupt("written for another shape of \(T.self) (fields added, removed or changed since)")
        }
        return value
    }
}

/// The bytes being read and the fingerprint of what was asked for so far.
final class CompactBinarySource {
    let bytes: ArraySlice<UInt8>
    @exclusivity(unchecked) var offset: Int
    let end: Int
    @exclusivity(unchecked) var fingerprint = CompactBinaryFormat.fnvOffset
    /// The format version of the bytes.
    var version = CompactBinaryFormat.version
    /// For each keyed container opened so far (version 2 on), how many of its stored fields are
    /// still to be read.
    @exclusivity(unchecked) var fieldsLeft: [Int] = []

    /// Whether the keyed container `slot` has a stored field left (always, in version 1).
    @inline(__always) func hasField(_ slot: Int) -> Bool { slot < 0 || fieldsLeft[slot] > 0 }

    /// Counts the next field of keyed container `slot` as read; false when it has none left.
    @inline(__always) func takeField(_ slot: Int) -> Bool {
        guard slot >= 0 else { return true }
        guard fieldsLeft[slot] > 0 else { return false }
        fieldsLeft[slot] -= 1
        return true
    }

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        offset = bytes.startIndex
        end = bytes.endIndex
    }

    @inline(__always) func tag(_ t: CompactBinaryFormat.Tag) { CompactBinaryFormat.mix(&fingerprint, t.rawValue) }
    @inline(__always) func key(_ k: some CodingKey) { CompactBinaryFormat.mix(&fingerprint, key: k) }

    func corrupt(_ message: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: [], debugDescription: "compact binary at byte \(offset - bytes.startIndex): \(message)"))
    }

    func byte() throws -> UInt8 {
        guard offset < end else { throw corrupt("truncated") }
        defer { offset += 1 }
        return bytes[offset]
    }

    @inline(__always)
    func fixed<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        let size = MemoryLayout<I>.size
        guard end - offset >= size else { throw corrupt("truncated") }
        let v = bytes.withUnsafeBytes { raw in
            raw.loadUnaligned(fromByteOffset: offset - bytes.startIndex, as: I.self)
        }
        offset += size
        return I(littleEndian: v)
    }

    @inline(__always)
    func read<I: FixedWidthInteger>(_ type: I.Type, _ t: CompactBinaryFormat.Tag) throws -> I {
        tag(t)
        return try fixed(type)
    }

    func readBool() throws -> Bool {
        tag(.bool)
        switch try byte() {
        case 0: return false
        case 1: return true
        case let other: throw corrupt("boolean byte \(other)")
        }
    }

    func readDouble() throws -> Double { Double(bitPattern: try read(UInt64.self, .double)) }
    func readFloat() throws -> Float { Float(bitPattern: try read(UInt32.self, .float)) }
    func readInt() throws -> Int {
        let v = try read(Int64.self, .int)
        guard let i = Int(exactly: v) else { throw corrupt("\(v) does not fit in Int") }
        return i
    }
    func readUInt() throws -> UInt {
        let v = try read(UInt64.self, .uint)
        guard let i = UInt(exactly: v) else { throw corrupt("\(v) does not fit in UInt") }
        return i
    }

    func readString() throws -> String {
        tag(.string)
        let n = try readLength()
        let start = offset
        offset += n
        return String(decoding: bytes[start..<offset], as: UTF8.self)
    }

    /// Unsigned LEB128, at most what is left in the buffer.
    func readLength() throws -> Int {
        var v = 0, shift = 0
        while true {
            let b = try byte()
            guard shift < 63 else { throw corrupt("length too long") }
            v |= Int(b & 0x7F) << shift
            if b < 0x80 { break }
            shift += 7
        }
        guard v <= end - offset else { throw corrupt("length \(v) beyond the end") }
        return v
    }

    /// Any value; mirrors `CompactBinarySink.encodeValue`.
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == Double.self { return unsafeBitCast(try readDouble(), to: T.self) }
        if T.self == Float.self { return unsafeBitCast(try readFloat(), to: T.self) }
        if T.self == Int32.self { return unsafeBitCast(try read(Int32.self, .int32), to: T.self) }
        if T.self == Int.self { return unsafeBitCast(try readInt(), to: T.self) }
        if T.self == String.self { return unsafeBitCast(try readString(), to: T.self) }
        if let optional = T.self as? any CompactBinaryDecodableOptional.Type {
            return try optional.decodePresence(from: self) as! T
        }
        if let dictionary = T.self as? any CompactBinaryDecodableDictionary.Type {
            return try dictionary.decodePairs(from: self) as! T
        }
        return try T(from: CompactBinaryDecoding(source: self))
    }
}

/// The `Decoder` handed to each value's `init(from:)`.
struct CompactBinaryDecoding: Decoder {
    let source: CompactBinarySource
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        source.tag(.keyed)
        var slot = -1
        if source.version >= 2 {
            slot = source.fieldsLeft.count
            source.fieldsLeft.append(Int(try source.byte()))
        }
        return KeyedDecodingContainer(CompactKeyedDecodingContainer<Key>(source: source, slot: slot))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        source.tag(.unkeyed)
        let count = Int(try source.fixed(UInt32.self))
        guard count <= source.end - source.offset else { throw source.corrupt("\(count) elements cannot fit in what is left") }
        return CompactUnkeyedDecodingContainer(source: source, count: count)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        source.tag(.single)
        return CompactSingleValueDecodingContainer(source: source)
    }
}
