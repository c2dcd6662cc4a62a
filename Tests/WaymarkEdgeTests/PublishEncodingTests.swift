import Foundation
import Testing
import WaymarkCore
import WaymarkProtobuf
import WaymarkService
@testable import WaymarkEdge

/// `publish.encoding`: the key, and a spool holding batches of both encodings (the setting may
/// change between two starts) that reads every one back for resending.
@Suite struct PublishEncodingTests {
    func load(_ flags: [String: String], env: [String: String] = [:]) throws -> EdgeConfig {
        try EdgeConfig.load(ConfigLayers(filePath: nil, envPrefix: "WAYMARK_EDGE", flags: ["site": "s.yaml", "gateway": "gw1"].merging(flags) { $1 },
                                         environment: env, knownKeys: EdgeConfig.keys))
    }

    @Test("publish.encoding is json by default, protobuf when asked; anything else is an error naming the key")
    func key() throws {
        #expect(try load([:]).publishEncoding == .json)
        #expect(try load(["publish.encoding": "protobuf"]).publishEncoding == .protobuf)
        #expect(try load(["publish.encoding": "json"]).publishEncoding == .json)
        #expect(try load([:], env: ["WAYMARK_EDGE_PUBLISH_ENCODING": "protobuf"]).publishEncoding == .protobuf)
        let flag = #expect(throws: ConfigLayers.ConfigError.self) { try load(["publish.encoding": "msgpack"]) }
        #expect(flag?.description == "--publish-encoding: 'msgpack' is not a batch encoding: json (the default) or protobuf")
        let env = #expect(throws: ConfigLayers.ConfigError.self) { try load([:], env: ["WAYMARK_EDGE_PUBLISH_ENCODING": "JSON"]) }
        #expect(env?.description.hasPrefix("WAYMARK_EDGE_PUBLISH_ENCODING: 'JSON'") == true, "\(env?.description ?? "")")
    }

    @Test("publish.shards is 1 (unsharded) by default; 1…1024; anything else is an error naming the key")
    func shardsKey() throws {
        #expect(try load([:]).publishShards == .single)
        #expect(try load(["publish.shards": "16"]).publishShards.count == 16)
        #expect(try load([:], env: ["WAYMARK_EDGE_PUBLISH_SHARDS": "2"]).publishShards.count == 2)
        let zero = #expect(throws: ConfigLayers.ConfigError.self) { try load(["publish.shards": "0"]) }
        #expect(zero?.description.hasPrefix("--publish-shards: 0 is not a shard count in 1…1024") == true, "\(zero?.description ?? "")")
        #expect(throws: ConfigLayers.ConfigError.self) { try load(["publish.shards": "two"]) }
    }

    func batch(_ seq: UInt64) -> SightingBatch {
        SightingBatch(gateway: "gw1", boot: "b1", seq: seq, start: 1_700_000_000, end: 1_700_000_001, sightings: [
            .init(device: DeviceID("mac:aa-bb-cc-dd-ee-ff")!, count: 2, rssiMax: -60, rssiMean: -61.5, rssiLast: -63,
                  tx: nil, first: 1_700_000_000.2, last: 1_700_000_000.7),
        ])
    }

    @Test("a spool with JSON and protobuf batches recovers both after a restart, byte for byte")
    func mixedSpoolRecovers() throws {
        let dir = EdgeTestData.temporaryDirectory("spool-mixed")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let payloads: [[UInt8]] = [BatchCoding.encode(batch(1)), ProtobufBatchCoding.encode(batch(2)),
                                   BatchCoding.encode(batch(3)), ProtobufBatchCoding.encode(batch(4))]
        #expect(payloads.map(BatchEncoding.of) == [.json, .protobuf, .json, .protobuf])
        do {
            let spool = try Spool(.init(directory: dir, segmentBatches: 3, fsync: false))
            for (i, p) in payloads.enumerated() { try spool.append(p, boot: "b1", seq: UInt64(i + 1)) }
            #expect(spool.acknowledge(boot: "b1", seq: 1) == 1)
            spool.close()
        }
        let reopened = try Spool(.init(directory: dir, segmentBatches: 3, fsync: false))
        #expect(reopened.recovered == 3)
        #expect(reopened.damagedRegions == 0)
        #expect(reopened.entries.map(\.seq) == [2, 3, 4])
        #expect(reopened.entries.allSatisfy { $0.boot == "b1" })
        let due = reopened.takeDue(now: 0, resendAfter: 10, limit: 10)
        #expect(try due.map { try reopened.payload(of: $0) } == Array(payloads[1...]))
    }

    @Test("a record that is neither a JSON nor a protobuf batch counts as damaged")
    func strangeRecordIsDamaged() throws {
        let dir = EdgeTestData.temporaryDirectory("spool-strange")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            let spool = try Spool(.init(directory: dir, segmentBatches: 10, fsync: false))
            try spool.append(ProtobufBatchCoding.encode(batch(1)), boot: "b1", seq: 1)
            try spool.append([0xFF, 0x01, 0x02], boot: "b1", seq: 2)
            // A protobuf batch cut short: without its trailing sighting_count it is not taken.
            let cut = ProtobufBatchCoding.encode(batch(3))
            try spool.append(Array(cut.prefix(cut.count - 2)), boot: "b1", seq: 3)
            spool.close()
        }
        let reopened = try Spool(.init(directory: dir, segmentBatches: 10, fsync: false))
        #expect(reopened.entries.map(\.seq) == [1])
        #expect(reopened.damagedRegions == 2)
    }
}
