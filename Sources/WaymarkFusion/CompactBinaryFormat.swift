/// The byte layout shared by `CompactBinaryEncoder` and `CompactBinaryDecoder`.
///
/// A value is written depth first in the order its `encode(to:)` visits it, without field names:
/// fixed-width little-endian numbers (floating point as their bit patterns, so NaN and ±∞ survive),
/// strings and unkeyed containers prefixed by their length, and every `Optional` as a presence byte
/// (0 or 1) followed by the wrapped value, every `Dictionary` as its count and key-value pairs. What is left out of the bytes is checked instead: a
/// 64-bit *fingerprint* hashes, in order, every key name, every container kind and every primitive
/// type the encoder visited. The decoder recomputes it from what the type's `init(from:)` asks for,
/// so a field added, removed, renamed, reordered or retyped since the bytes were written makes
/// decoding fail (with `DecodingError.dataCorrupted`) instead of reading the wrong fields.
///
/// **Fields added later** (version 2): every keyed container starts with the number of fields
/// written to it (one byte). A field that a type asks for beyond that number is absent:
/// `contains` is false, `decodeIfPresent` returns nil, `decode` throws `keyNotFound`, and nothing
/// of it enters the fingerprint. So a stored property appended at the *end* of a type reads bytes
/// written before it existed when a hand-written `init(from:)` decodes it as
/// `c.contains(.x) ? try c.decode(T.self, forKey: .x) : default` (an `Optional` property as the
/// synthesized conformance does, `decodeIfPresent`); the fingerprint still covers every field the
/// bytes hold, and this works with JSON too. Any other change — a field removed, renamed,
/// reordered or retyped, or appended and decoded unconditionally as the synthesized conformance
/// does for a non-optional — is still refused.
///
/// Layout: magic `0xB7`, format version (`2`; version `1`, without the field counts, is still
/// read), the fingerprint (8 bytes), then the payload.
/// Types that encode `nil` by hand (`encodeNil`) are refused when encoding; use an `Optional`.
enum CompactBinaryFormat {
    static let magic: UInt8 = 0xB7
    /// The version written.
    static let version: UInt8 = 2
    /// The versions read.
    static let readable: ClosedRange<UInt8> = 1...2
    static let headerSize = 10

    static let fnvOffset: UInt64 = 0xcbf2_9ce4_8422_2325
    static let fnvPrime: UInt64 = 0x100_0000_01b3

    /// What the fingerprint mixes in besides key names.
    enum Tag: UInt8 {
        case keyed = 0xF0, unkeyed, single, optional, superEncoder, endKey, dictionary
        case bool = 0x01, string, double, float, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64
    }

    @inline(__always)
    static func mix(_ hash: inout UInt64, _ byte: UInt8) {
        hash = (hash ^ UInt64(byte)) &* fnvPrime
    }

    @inline(__always)
    static func mix(_ hash: inout UInt64, key: some CodingKey) {
        var name = key.stringValue
        name.withUTF8 { bytes in
            for b in bytes { hash = (hash ^ UInt64(b)) &* fnvPrime }
        }
        mix(&hash, Tag.endKey.rawValue)
    }
}

/// An `Optional` whose wrapped value can be encoded; lets the encoder write a presence byte for
/// every optional, whichever container it is in.
protocol CompactBinaryEncodableOptional {
    func encodePresence(into sink: CompactBinarySink) throws
}

extension Optional: CompactBinaryEncodableOptional where Wrapped: Encodable {
    func encodePresence(into sink: CompactBinarySink) throws {
        sink.tag(.optional)
        switch self {
        case .none: sink.bytes.append(0)
        case .some(let wrapped):
            sink.bytes.append(1)
            try sink.encodeValue(wrapped)
        }
    }
}

/// An `Optional` whose wrapped value can be decoded.
protocol CompactBinaryDecodableOptional {
    static func decodePresence(from source: CompactBinarySource) throws -> Self
}

extension Optional: CompactBinaryDecodableOptional where Wrapped: Decodable {
    static func decodePresence(from source: CompactBinarySource) throws -> Self {
        source.tag(.optional)
        switch try source.byte() {
        case 0: return nil
        case 1: return try source.decodeValue(Wrapped.self)
        case let other: throw source.corrupt("presence byte \(other) is neither 0 nor 1")
        }
    }
}

/// A `Dictionary`, written as its count and (key, value) pairs: its own `Codable` conformance
/// relies on listing a keyed container's keys, which this format does not store.
protocol CompactBinaryEncodableDictionary {
    func encodePairs(into sink: CompactBinarySink) throws
}

extension Dictionary: CompactBinaryEncodableDictionary where Key: Encodable, Value: Encodable {
    func encodePairs(into sink: CompactBinarySink) throws {
        sink.tag(.dictionary)
        sink.writeLength(count)
        for (key, value) in self {
            try sink.encodeValue(key)
            try sink.encodeValue(value)
        }
    }
}

protocol CompactBinaryDecodableDictionary {
    static func decodePairs(from source: CompactBinarySource) throws -> Self
}

extension Dictionary: CompactBinaryDecodableDictionary where Key: Decodable, Value: Decodable {
    static func decodePairs(from source: CompactBinarySource) throws -> Self {
        source.tag(.dictionary)
        let n = try source.readLength()
        var out: [Key: Value] = [:]
        out.reserveCapacity(n)
        for _ in 0..<n {
            let key = try source.decodeValue(Key.self)
            out[key] = try source.decodeValue(Value.self)
        }
        guard out.count == n else { throw source.corrupt("a dictionary repeats a key") }
        return out
    }
}
