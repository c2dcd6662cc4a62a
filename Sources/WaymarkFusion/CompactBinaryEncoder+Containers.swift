/// Keyed values are written in the order they are encoded, after a count of them (one byte,
/// patched as values are added; version 2 on); the key names go into the fingerprint only.
/// `encodeIfPresent` writes a presence byte, like every other `Optional`.
struct CompactKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let sink: CompactBinarySink
    /// Where the field count is (nil: format version 1, no count).
    let countOffset: Int?
    var codingPath: [any CodingKey] { [] }

    /// Counts the field about to be written and mixes its key into the fingerprint.
    @inline(__always) private func field(_ key: Key) {
        sink.key(key)
        if let countOffset { sink.countField(at: countOffset) }
    }

    mutating func encodeNil(forKey key: Key) throws { throw sink.unsupportedNil([key]) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { field(key); sink.write(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { field(key); sink.write(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { field(key); sink.write(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { field(key); sink.write(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { field(key); sink.write(value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { field(key); sink.write(value, .int8) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { field(key); sink.write(value, .int16) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { field(key); sink.write(value, .int32) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { field(key); sink.write(value, .int64) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { field(key); sink.write(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { field(key); sink.write(value, .uint8) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { field(key); sink.write(value, .uint16) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { field(key); sink.write(value, .uint32) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { field(key); sink.write(value, .uint64) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { field(key); try sink.encodeValue(value) }

    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { field(key); try value.encodePresence(into: sink) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { field(key); try value.encodePresence(into: sink) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { field(key); try value.encodePresence(into: sink) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { field(key); try value.encodePresence(into: sink) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { field(key); try value.encodePresence(into: sink) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { field(key); try value.encodePresence(into: sink) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { field(key); try value.encodePresence(into: sink) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { field(key); try value.encodePresence(into: sink) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { field(key); try value.encodePresence(into: sink) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { field(key); try value.encodePresence(into: sink) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { field(key); try value.encodePresence(into: sink) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { field(key); try value.encodePresence(into: sink) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { field(key); try value.encodePresence(into: sink) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { field(key); try value.encodePresence(into: sink) }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { field(key); try value.encodePresence(into: sink) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        field(key)
        return CompactBinaryEncoding(sink: sink).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        field(key)
        return CompactBinaryEncoding(sink: sink).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        if let countOffset { sink.countField(at: countOffset) }
        sink.tag(.superEncoder)
        return CompactBinaryEncoding(sink: sink)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        field(key)
        sink.tag(.superEncoder)
        return CompactBinaryEncoding(sink: sink)
    }
}

/// Elements follow a 32-bit count, patched as elements are added (an encoder is not told when a
/// container is finished).
struct CompactUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let sink: CompactBinarySink
    let countOffset: Int
    private(set) var count = 0
    var codingPath: [any CodingKey] { [] }

    private mutating func added() {
        count += 1
        sink.patch(UInt32(truncatingIfNeeded: count), at: countOffset)
    }

    mutating func encodeNil() throws { throw sink.unsupportedNil([]) }
    mutating func encode(_ value: Bool) throws { sink.write(value); added() }
    mutating func encode(_ value: String) throws { sink.write(value); added() }
    mutating func encode(_ value: Double) throws { sink.write(value); added() }
    mutating func encode(_ value: Float) throws { sink.write(value); added() }
    mutating func encode(_ value: Int) throws { sink.write(value); added() }
    mutating func encode(_ value: Int8) throws { sink.write(value, .int8); added() }
    mutating func encode(_ value: Int16) throws { sink.write(value, .int16); added() }
    mutating func encode(_ value: Int32) throws { sink.write(value, .int32); added() }
    mutating func encode(_ value: Int64) throws { sink.write(value, .int64); added() }
    mutating func encode(_ value: UInt) throws { sink.write(value); added() }
    mutating func encode(_ value: UInt8) throws { sink.write(value, .uint8); added() }
    mutating func encode(_ value: UInt16) throws { sink.write(value, .uint16); added() }
    mutating func encode(_ value: UInt32) throws { sink.write(value, .uint32); added() }
    mutating func encode(_ value: UInt64) throws { sink.write(value, .uint64); added() }
    mutating func encode<T: Encodable>(_ value: T) throws { try sink.encodeValue(value); added() }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        added()
        return CompactBinaryEncoding(sink: sink).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        added()
        return CompactBinaryEncoding(sink: sink).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        added()
        sink.tag(.superEncoder)
        return CompactBinaryEncoding(sink: sink)
    }
}

/// One value, written as is.
struct CompactSingleValueEncodingContainer: SingleValueEncodingContainer {
    let sink: CompactBinarySink
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws { throw sink.unsupportedNil([]) }
    mutating func encode(_ value: Bool) throws { sink.write(value) }
    mutating func encode(_ value: String) throws { sink.write(value) }
    mutating func encode(_ value: Double) throws { sink.write(value) }
    mutating func encode(_ value: Float) throws { sink.write(value) }
    mutating func encode(_ value: Int) throws { sink.write(value) }
    mutating func encode(_ value: Int8) throws { sink.write(value, .int8) }
    mutating func encode(_ value: Int16) throws { sink.write(value, .int16) }
    mutating func encode(_ value: Int32) throws { sink.write(value, .int32) }
    mutating func encode(_ value: Int64) throws { sink.write(value, .int64) }
    mutating func encode(_ value: UInt) throws { sink.write(value) }
    mutating func encode(_ value: UInt8) throws { sink.write(value, .uint8) }
    mutating func encode(_ value: UInt16) throws { sink.write(value, .uint16) }
    mutating func encode(_ value: UInt32) throws { sink.write(value, .uint32) }
    mutating func encode(_ value: UInt64) throws { sink.write(value, .uint64) }
    mutating func encode<T: Encodable>(_ value: T) throws { try sink.encodeValue(value) }
}
