/// Encodes any `Encodable` into the compact, schema-checked binary layout of `CompactBinaryFormat`:
/// about a third of the size of JSON and many times faster to write and read, while still taking
/// every stored property from the type's own `Codable` conformance (a field added to a checkpointed
/// type is encoded without anyone touching this file).
///
///     let bytes = try CompactBinaryEncoder().encode(checkpoint)
///     let back = try CompactBinaryDecoder().decode(DeviceCheckpoint.self, from: bytes)
///
/// Reuse one encoder for many values (it remembers how to treat each type it has seen); an
/// encoder is not for use by several threads at once.
public final class CompactBinaryEncoder {
    private var kinds: [ObjectIdentifier: CompactBinarySink.Kind] = [:]
    private let version: UInt8

    public init() { version = CompactBinaryFormat.version }

    /// An encoder that writes an older format version (1 or the current), for tests of reading
    /// what an earlier build saved.
    init(formatVersion: UInt8) {
        precondition(CompactBinaryFormat.readable.contains(formatVersion), "unknown compact binary format version")
        version = formatVersion
    }

    /// The encoded bytes of `value`.
    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        var out: [UInt8] = []
        try encode(value, appendingTo: &out)
        return out
    }

    /// Appends the encoded bytes of `value` to `out` (to pack many values in one buffer).
    public func encode<T: Encodable>(_ value: T, appendingTo out: inout [UInt8]) throws {
        let sink = CompactBinarySink()
        swap(&sink.bytes, &out)
        swap(&sink.kinds, &kinds)
        defer {
            swap(&sink.bytes, &out)
            swap(&sink.kinds, &kinds)
        }
        let start = sink.bytes.count
        sink.version = version
        sink.bytes.append(CompactBinaryFormat.magic)
        sink.bytes.append(version)
        sink.bytes.append(contentsOf: repeatElement(0, count: 8))
        do {
            try sink.encodeValue(value)
            if sink.tooManyFields {
                throw EncodingError.invalidValue(value, .init(
                    codingPath: [], debugDescription: "a keyed container of \(T.self) has more than 255 fields, more than the compact binary format counts"))
            }
        } catch {
            sink.bytes.removeSubrange(start...)
            throw error
        }
        sink.patch(UInt64(sink.fingerprint), at: start + 2)
    }
}

/// The growing buffer and running fingerprint shared by an encoder and its containers.
final class CompactBinarySink {
    /// How `encodeValue` treats a type; cached because conformance checks are slow.
    enum Kind { case optional, dictionary, other }

    // Only ever used by one thread, never re-entrantly: no dynamic exclusivity checks (they
    // cost a sixth of the encoding time).
    @exclusivity(unchecked) var bytes: [UInt8] = []
    @exclusivity(unchecked) var fingerprint = CompactBinaryFormat.fnvOffset
    var kinds: [ObjectIdentifier: Kind] = [:]
    /// The format version being written (1: keyed containers carry no field count).
    var version = CompactBinaryFormat.version
    /// Set when a keyed container got more fields than its one-byte count holds.
    var tooManyFields = false

    /// Counts one more field of the keyed container whose count is at `offset`.
    @inline(__always) func countField(at offset: Int) {
        if bytes[offset] == UInt8.max { tooManyFields = true } else { bytes[offset] &+= 1 }
    }

    @inline(__always) func tag(_ t: CompactBinaryFormat.Tag) { CompactBinaryFormat.mix(&fingerprint, t.rawValue) }
    @inline(__always) func key(_ k: some CodingKey) { CompactBinaryFormat.mix(&fingerprint, key: k) }

    @inline(__always)
    func write<I: FixedWidthInteger>(_ value: I, _ t: CompactBinaryFormat.Tag) {
        tag(t)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    func write(_ value: Bool) { tag(.bool); bytes.append(value ? 1 : 0) }
    func write(_ value: Double) { write(value.bitPattern, .double) }
    func write(_ value: Float) { write(value.bitPattern, .float) }
    func write(_ value: Int) { write(Int64(value), .int) }
    func write(_ value: UInt) { write(UInt64(value), .uint) }

    func write(_ value: String) {
        tag(.string)
        var s = value
        s.withUTF8 { utf8 in
            writeLength(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    /// Unsigned LEB128.
    func writeLength(_ n: Int) {
        var v = UInt(n)
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    func patch(_ value: UInt64, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { raw in
            for (i, b) in raw.enumerated() { bytes[offset + i] = b }
        }
    }

    func patch(_ value: UInt32, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { raw in
            for (i, b) in raw.enumerated() { bytes[offset + i] = b }
        }
    }

    /// Any value: optionals get their presence byte, primitives their fixed layout, the rest
    /// their own `encode(to:)`.
    func encodeValue<T: Encodable>(_ value: T) throws {
        // Metatype comparisons are cheap; the protocol cast only runs for the rest.
        if T.self == Double.self { write(unsafeBitCast(value, to: Double.self)) }
        else if T.self == Float.self { write(unsafeBitCast(value, to: Float.self)) }
        else if T.self == Int32.self { write(unsafeBitCast(value, to: Int32.self), .int32) }
        else if T.self == Int.self { write(unsafeBitCast(value, to: Int.self)) }
        else if T.self == String.self { write(unsafeBitCast(value, to: String.self)) }
        else {
            let id = ObjectIdentifier(T.self)
            let kind = kinds[id] ?? {
                let k: Kind = T.self is any CompactBinaryEncodableOptional.Type ? .optional
                    : T.self is any CompactBinaryEncodableDictionary.Type ? .dictionary : .other
                kinds[id] = k
                return k
            }()
            switch kind {
            case .other: try value.encode(to: CompactBinaryEncoding(sink: self))
            case .optional: try (value as! any CompactBinaryEncodableOptional).encodePresence(into: self)
            case .dictionary: try (value as! any CompactBinaryEncodableDictionary).encodePairs(into: self)
            }
        }
    }

    func unsupportedNil(_ path: [any CodingKey]) -> EncodingError {
        EncodingError.invalidValue(Optional<Int>.none as Any, .init(
            codingPath: path,
            debugDescription: "the compact binary format stores nil only as an Optional's value; encodeNil is not supported"))
    }
}

/// The `Encoder` handed to each value's `encode(to:)`.
struct CompactBinaryEncoding: Encoder {
    let sink: CompactBinarySink
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        sink.tag(.keyed)
        var countOffset: Int? = nil
        if sink.version >= 2 {
            countOffset = sink.bytes.count
            sink.bytes.append(0)
        }
        return KeyedEncodingContainer(CompactKeyedEncodingContainer<Key>(sink: sink, countOffset: countOffset))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        sink.tag(.unkeyed)
        let offset = sink.bytes.count
        sink.bytes.append(contentsOf: [0, 0, 0, 0])
        return CompactUnkeyedEncodingContainer(sink: sink, countOffset: offset)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        sink.tag(.single)
        return CompactSingleValueEncodingContainer(sink: sink)
    }
}
