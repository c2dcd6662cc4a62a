import Foundation
import Testing
import WaymarkCore
@testable import WaymarkFusion
@testable import WaymarkAggregator

/// The checkpoint encoding: exact round trips, and a loud failure — never wrong fields — when the
/// encoded type changed shape or the bytes are damaged.
@Suite struct CompactBinaryCoderTests {
    struct Inner: Codable, Equatable {
        var name: String
        var level: Float
        var flags: [Bool]
    }

    struct Sample: Codable, Equatable {
        var id: Int
        var small: Int32
        var big: UInt64
        var signed: Int8
        var ratio: Double
        var note: String?
        var missing: Double?
        var nested: [Inner]
        var optionals: [Int?]
        var table: [String: Double]
        var state: RegionState
    }

    let sample = Sample(id: -42, small: 7, big: .max, signed: -3, ratio: 0.1, note: "héllo\n\"", missing: nil,
                        nested: [Inner(name: "a", level: -.infinity, flags: [true, false]), Inner(name: "", level: 2.5, flags: [])],
                        optionals: [1, nil, 3], table: ["x": 1.5], state: .inside)

    @Test func roundTripsEveryKindOfValueExactly() throws {
        let bytes = try CompactBinaryEncoder().encode(sample)
        #expect(try CompactBinaryDecoder().decode(Sample.self, from: bytes) == sample)
        // Non-finite numbers survive bit for bit.
        let special = try CompactBinaryDecoder().decode([Double].self, from: CompactBinaryEncoder().encode([Double.nan, .infinity, -0.0]))
        #expect(special[0].isNaN && special[1] == .infinity && special[2].sign == .minus)
    }

    /// The checkpoints of an engine whose `devices` walked `path` along a line of `regions`.
    static func engineCheckpoints(devices: Int, path: [Int], regions: Int) throws -> [DeviceCheckpoint] {
        var core = AggregatorCore(site: try LineVenue.site(count: regions), topics: Topics(site: "line"))
        let records = LineWalk.records(devices: devices, path: path, dwell: 20, start: 1_700_000_000, regions: regions)
        for b in LineWalk.batches(records) {
            _ = core.handle(topic: Topics(site: "line").sightings(b.gateway), payload: Array(try JSONEncoder().encode(b)), receivedAt: b.end + 1)
        }
        return core.fusion.checkpoint()
    }

    @Test func engineCheckpointsRoundTripAndAreSmallerThanJSON() throws {
        let checkpoints = try Self.engineCheckpoints(devices: 4, path: [0, 1, 2, 3, 4, 5], regions: 6)
        #expect(checkpoints.count == 4)
        var binary = 0, json = 0
        for cp in checkpoints {
            let bytes = try CompactBinaryEncoder().encode(cp)
            // The ordinal is stored in its own column (device_state.ordinal), not in the encoding.
            var back = try CompactBinaryDecoder().decode(DeviceCheckpoint.self, from: bytes)
            #expect(back.ordinal == 0)
            back.ordinal = cp.ordinal
            #expect(back == cp)
            binary += bytes.count
            json += try JSONEncoder().encode(cp).count
        }
        #expect(binary * 2 < json)
    }

    @Test func packedCheckpointsSliceBackOneByOne() throws {
        let checkpoints = try Self.engineCheckpoints(devices: 3, path: [0, 1, 2], regions: 4)
        let packed = try AggregatorStore.packCheckpoints(checkpoints)
        for (i, cp) in checkpoints.enumerated() {
            let slice = packed.bytes[(packed.offsets[i] - 1)..<(packed.offsets[i] - 1 + packed.lengths[i])]
            var back = try CompactBinaryDecoder().decode(DeviceCheckpoint.self, from: slice)
            back.ordinal = cp.ordinal  // stored beside the encoding
            #expect(back == cp)
        }
    }

    // Shapes a type may take after an engine change.
    struct V1: Codable, Equatable { var a: Int; var b: Double }
    struct V1Added: Codable { var a: Int; var b: Double; var c: Int }
    struct V1Renamed: Codable { var a: Int; var d: Double }
    struct V1Retyped: Codable { var a: Int; var b: Float; var pad: Float }
    struct V1Reordered: Codable { var b: Double; var a: Int }

    @Test func aTypeThatChangedShapeIsRefusedNotMisread() throws {
        let bytes = try CompactBinaryEncoder().encode([V1(a: 1, b: 2), V1(a: 3, b: 4)])
        #expect(throws: DecodingError.self) { try CompactBinaryDecoder().decode([V1Added].self, from: bytes) }
        #expect(throws: DecodingError.self) { try CompactBinaryDecoder().decode([V1Renamed].self, from: bytes) }
        #expect(throws: DecodingError.self) { try CompactBinaryDecoder().decode([V1Retyped].self, from: bytes) }
        #expect(throws: DecodingError.self) { try CompactBinaryDecoder().decode([V1Reordered].self, from: bytes) }
        #expect(try CompactBinaryDecoder().decode([V1].self, from: bytes).map(\.b) == [2, 4])
    }

    /// `V1` with two fields appended later, read with a default when the bytes predate them.
    struct V1Later: Codable, Equatable {
        var a: Int
        var b: Double
        var c = 7
        var note: String?

        enum CodingKeys: String, CodingKey { case a, b, c, note }

        init(a: Int, b: Double, c: Int = 7, note: String? = nil) {
            (self.a, self.b, self.c, self.note) = (a, b, c, note)
        }

        init(from decoder: any Decoder) throws {
            let k = try decoder.container(keyedBy: CodingKeys.self)
            a = try k.decode(Int.self, forKey: .a)
            b = try k.decode(Double.self, forKey: .b)
            c = k.contains(.c) ? try k.decode(Int.self, forKey: .c) : 7
            note = try k.decodeIfPresent(String.self, forKey: .note)
        }
    }

    /// The absent fields are those of each container, not of the whole value: `after` follows them.
    struct Holder<Item: Codable & Equatable>: Codable, Equatable {
        var items: [Item]
        var after: String
    }

    @Test func aFieldAppendedLaterReadsOlderBytesWithItsDefault() throws {
        let old = try CompactBinaryEncoder().encode(Holder(items: [V1(a: 1, b: 2), V1(a: 3, b: 4)], after: "x"))
        let read = try CompactBinaryDecoder().decode(Holder<V1Later>.self, from: old)
        #expect(read == Holder(items: [V1Later(a: 1, b: 2), V1Later(a: 3, b: 4)], after: "x"))
        // Written by the newer shape, the fields are kept.
        let new = Holder(items: [V1Later(a: 5, b: 6, c: 9, note: "n"), V1Later(a: 8, b: 0)], after: "y")
        #expect(try CompactBinaryDecoder().decode(Holder<V1Later>.self, from: CompactBinaryEncoder().encode(new)) == new)
        // The older shape does not read the newer bytes: their extra fields would be lost.
        #expect(throws: DecodingError.self) { try CompactBinaryDecoder().decode(Holder<V1>.self, from: CompactBinaryEncoder().encode(new)) }
        // A field appended without a default (the synthesized `decode`) is refused, and names itself.
        #expect {
            try CompactBinaryDecoder().decode([V1Added].self, from: CompactBinaryEncoder().encode([V1(a: 1, b: 2)]))
        } throws: { error in
            guard case DecodingError.keyNotFound(let key, _) = error else { return false }
            return key.stringValue == "c"
        }
        // Bytes of the first format version carry no field counts: they read as before, and only
        // into the shape that wrote them.
        let v1 = try CompactBinaryEncoder(formatVersion: 1).encode([V1(a: 1, b: 2)])
        #expect(v1[1] == 1 && old[1] == CompactBinaryFormat.version)
        #expect(try CompactBinaryDecoder().decode([V1].self, from: v1).map(\.a) == [1])
        #expect(throws: DecodingError.self) { try CompactBinaryDecoder().decode([V1Later].self, from: v1) }
        #expect(throws: DecodingError.self) { try CompactBinaryDecoder().decode([V1Renamed].self, from: v1) }
    }

    /// What the aggregator saved before the field counts (format version 1) restores unchanged.
    @Test func checkpointsOfTheFirstFormatVersionStillRestore() throws {
        let checkpoints = try Self.engineCheckpoints(devices: 2, path: [0, 1, 2], regions: 4)
        #expect(checkpoints.count == 2)
        for cp in checkpoints {
            let v1 = try CompactBinaryEncoder(formatVersion: 1).encode(cp), v2 = try CompactBinaryEncoder().encode(cp)
            #expect(v2.count > v1.count)
            for bytes in [v1, v2] {
                var back = try CompactBinaryDecoder().decode(DeviceCheckpoint.self, from: bytes)
                back.ordinal = cp.ordinal
                #expect(back == cp)
            }
        }
    }

    struct Wide: Encodable {
        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
        var fields: Int
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            for i in 0..<fields { try c.encode(i, forKey: Key(stringValue: "f\(i)")) }
        }
    }

    @Test func aContainerOfMoreFieldsThanTheCountHoldsIsRefused() throws {
        #expect(try CompactBinaryEncoder().encode(Wide(fields: 255)).count > 255 * 8)
        #expect(throws: EncodingError.self) { try CompactBinaryEncoder().encode(Wide(fields: 256)) }
    }

    @Test func damagedBytesFailCleanly() throws {
        let bytes = try CompactBinaryEncoder().encode(sample)
        for n in 0..<bytes.count {
            #expect(throws: DecodingError.self) { try CompactBinaryDecoder().decode(Sample.self, from: Array(bytes.prefix(n))) }
        }
        #expect(throws: DecodingError.self) { try CompactBinaryDecoder().decode(Sample.self, from: bytes + [0]) }
        var flipped = bytes
        flipped[1] = 99  // format version
        #expect(throws: DecodingError.self) { try CompactBinaryDecoder().decode(Sample.self, from: flipped) }
        // Random corruption never crashes (it may, rarely, still decode: the fingerprint covers shape, not values).
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            var b = bytes
            b[Int.random(in: 10..<b.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            _ = try? CompactBinaryDecoder().decode(Sample.self, from: b)
        }
    }

    struct HandWrittenNil: Encodable {
        enum K: CodingKey { case x }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: K.self)
            try c.encodeNil(forKey: .x)
        }
    }

    @Test func nilWrittenByHandIsRefusedWhenEncoding() {
        #expect(throws: EncodingError.self) { try CompactBinaryEncoder().encode(HandWrittenNil()) }
        var out: [UInt8] = [1, 2, 3]
        #expect(throws: EncodingError.self) { try CompactBinaryEncoder().encode(HandWrittenNil(), appendingTo: &out) }
        #expect(out == [1, 2, 3])  // nothing half-written is left behind
    }
}
