/// Reads keyed values in the order they are asked for (the order they were encoded in, for
/// synthesized and symmetric hand-written conformances); the keys feed the fingerprint check.
/// Past the fields the bytes hold (version 2 counts them), a key is absent: `decodeIfPresent`
/// gives nil and `decode` throws `keyNotFound` (a field added to the type since).
struct CompactKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let source: CompactBinarySource
    /// This container's entry in `source.fieldsLeft` (-1: format version 1, fields not counted).
    let slot: Int
    var codingPath: [any CodingKey] { [] }
    /// The format does not list keys; every key asked for is read in turn.
    var allKeys: [Key] { [] }
    /// Whether the bytes hold another field (the format cannot tell which key it is).
    func contains(_ key: Key) -> Bool { source.hasField(slot) }

    /// Takes the next stored field for `key`, or throws `keyNotFound` when the bytes hold no more.
    @inline(__always) private func field(_ key: Key) throws {
        guard source.takeField(slot) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: [], debugDescription:
                "compact binary: the bytes were written before field '\(key.stringValue)' existed; decode it only when the container contains it, with a default otherwise"))
        }
        source.key(key)
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        throw source.corrupt("decodeNil(forKey: \(key.stringValue)) is not supported; decode an Optional instead")
    }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try field(key); return try source.readBool() }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try field(key); return try source.readString() }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try field(key); return try source.readDouble() }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try field(key); return try source.readFloat() }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try field(key); return try source.readInt() }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try field(key); return try source.read(type, .int8) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try field(key); return try source.read(type, .int16) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try field(key); return try source.read(type, .int32) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try field(key); return try source.read(type, .int64) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try field(key); return try source.readUInt() }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try field(key); return try source.read(type, .uint8) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try field(key); return try source.read(type, .uint16) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try field(key); return try source.read(type, .uint32) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try field(key); return try source.read(type, .uint64) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try field(key); return try source.decodeValue(type) }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optional(key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optional(key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optional(key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try optional(key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optional(key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optional(key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optional(key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optional(key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optional(key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optional(key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optional(key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optional(key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optional(key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optional(key) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try optional(key) }

    /// An absent field (added to the type after the bytes were written) is nil and leaves the
    /// fingerprint as the encoder left it.
    private func optional<T: Decodable>(_ key: Key) throws -> T? {
        guard source.takeField(slot) else { return nil }
        source.key(key)
        return try Optional<T>.decodePresence(from: source)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try field(key)
        return try CompactBinaryDecoding(source: source).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try field(key)
        return try CompactBinaryDecoding(source: source).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        guard source.takeField(slot) else { throw source.corrupt("superDecoder() past the fields the bytes hold") }
        source.tag(.superEncoder)
        return CompactBinaryDecoding(source: source)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try field(key)
        source.tag(.superEncoder)
        return CompactBinaryDecoding(source: source)
    }
}

/// Reads the elements counted at the container's start.
struct CompactUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let source: CompactBinarySource
    let total: Int
    private(set) var currentIndex = 0
    var codingPath: [any CodingKey] { [] }
    var count: Int? { total }
    var isAtEnd: Bool { currentIndex >= total }

    init(source: CompactBinarySource, count: Int) {
        self.source = source
        total = count
    }

    /// Counts the element about to be read (the source is a class, so reading needs no `self`).
    private mutating func next() throws -> CompactBinarySource {
        guard !isAtEnd else { throw source.corrupt("read past the \(total) elements of an unkeyed container") }
        currentIndex += 1
        return source
    }

    mutating func decodeNil() throws -> Bool { false }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try next().readBool() }
    mutating func decode(_ type: String.Type) throws -> String { try next().readString() }
    mutating func decode(_ type: Double.Type) throws -> Double { try next().readDouble() }
    mutating func decode(_ type: Float.Type) throws -> Float { try next().readFloat() }
    mutating func decode(_ type: Int.Type) throws -> Int { try next().readInt() }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next().read(type, .int8) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next().read(type, .int16) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next().read(type, .int32) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next().read(type, .int64) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next().readUInt() }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next().read(type, .uint8) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next().read(type, .uint16) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next().read(type, .uint32) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next().read(type, .uint64) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decodeValue(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try CompactBinaryDecoding(source: next()).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try CompactBinaryDecoding(source: next()).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let s = try next()
        s.tag(.superEncoder)
        return CompactBinaryDecoding(source: s)
    }
}

/// One value, read as is. Nothing in a single-value container is ever nil (optionals carry their
/// own presence byte).
struct CompactSingleValueDecodingContainer: SingleValueDecodingContainer {
    let source: CompactBinarySource
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { false }
    func decode(_ type: Bool.Type) throws -> Bool { try source.readBool() }
    func decode(_ type: String.Type) throws -> String { try source.readString() }
    func decode(_ type: Double.Type) throws -> Double { try source.readDouble() }
    func decode(_ type: Float.Type) throws -> Float { try source.readFloat() }
    func decode(_ type: Int.Type) throws -> Int { try source.readInt() }
    func decode(_ type: Int8.Type) throws -> Int8 { try source.read(type, .int8) }
    func decode(_ type: Int16.Type) throws -> Int16 { try source.read(type, .int16) }
    func decode(_ type: Int32.Type) throws -> Int32 { try source.read(type, .int32) }
    func decode(_ type: Int64.Type) throws -> Int64 { try source.read(type, .int64) }
    func decode(_ type: UInt.Type) throws -> UInt { try source.readUInt() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try source.read(type, .uint8) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try source.read(type, .uint16) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try source.read(type, .uint32) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try source.read(type, .uint64) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try source.decodeValue(type) }
}
