import Foundation
import Testing
import WaymarkCore
import WaymarkFusion
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

    @Test func engineCheckpointsRoundTripAndAreSmallerThanJSON() throws {
        var core = AggregatorCore(site: try LineVenue.site(count: 6), topics: Topics(site: "line"))
        let records = LineWalk.records(devices: 4, path: [0, 1, 2, 3, 4, 5], dwell: 20, start: 1_700_000_000, regions: 6)
        for b in LineWalk.batches(records) {
            _ = core.handle(topic: Topics(site: "line").sightings(b.gateway), payload: Array(try JSONEncoder().encode(b)), receivedAt: b.end + 1)
        }
        let checkpoints = core.fusion.checkpoint()
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
        var core = AggregatorCore(site: try LineVenue.site(count: 4), topics: Topics(site: "line"))
        let records = LineWalk.records(devices: 3, path: [0, 1, 2], dwell: 20, start: 1_700_000_000, regions: 4)
        for b in LineWalk.batches(records) {
            _ = core.handle(topic: Topics(site: "line").sightings(b.gateway), payload: Array(try JSONEncoder().encode(b)), receivedAt: b.end + 1)
        }
        let checkpoints = core.fusion.checkpoint()
        let packed = try AggregatorStore.packCheckpoints(checkpoints)
        for (i, cp) in checkpoints.enumerated() {
            let slice = packed.bytes[(packed.offsets[i] - 1)..<(packed.offsets[i] - 1 + packed.lengths[i])]
            var back = try CompactBinaryDecoder().decode(DeviceCheckpoint.self, from: slice)
            back.ordinal = cp.ordinal  // stored beside the encoding
            #expect(back == cp)
        }
    }

    // Shapes a type may take after an engine change.
    struct V1: Codable { var a: Int; var b: Double }
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
