import Foundation
import Testing
import WaymarkCore
import WaymarkEdge
import WaymarkMQTT

/// `publish.shards` on the real agent and broker: one batch per shard and window, each shard's
/// spool acked on its own topic (docs/scaling.md §1).
@Suite("Edge: sharded publishing", .enabled(if: EdgeTestEnvironment.hasBroker), .serialized)
struct EdgeShardsIntegrationTests {
    /// Records every batch per shard and acks the shards in `acking` on their ack topics.
    final class ShardCollector: @unchecked Sendable {
        let client: MQTTClient
        private let lock = NSLock()
        private var received: [Int: [SightingBatch]] = [:]
        private var ackingShards: Set<Int>

        init(broker: String, topics: Topics, acking: Set<Int>) throws {
            ackingShards = acking
            client = try MQTTClient(.init(clientID: "shards-\(UUID().uuidString.prefix(8))", reconnectDelay: 1, reconnectDelayMax: 1))
            client.onMessage = { [weak self] m in
                guard let self, let (gw, kind, topicShard) = topics.gatewayTopic(m.topic), kind == "sightings", let shard = topicShard,
                      let batch = try? JSONDecoder().decode(SightingBatch.self, from: Data(m.payload)) else { return }
                let ack = self.lock.withLock { () -> Bool in
                    self.received[shard, default: []].append(batch)
                    return self.ackingShards.contains(shard)
                }
                if ack, let payload = try? JSONEncoder().encode(GatewayAck(boot: batch.boot, seq: batch.seq)) {
                    _ = try? self.client.publish(topic: topics.ack(gw, shard: shard), payload: Array(payload), qos: 1)
                }
            }
            try client.subscribe(topics.allShardedSightings, qos: 1)
            try client.connect(MQTTConnection(url: broker))
        }

        func batches(_ shard: Int) -> [SightingBatch] { lock.withLock { received[shard] ?? [] } }
        func ack(_ shard: Int) { lock.withLock { _ = ackingShards.insert(shard) } }
        func close() { client.close() }
    }

    @Test("each window goes out once per shard with the shard's devices; an unacked shard stays spooled and is resent alone")
    func shardedPublishing() async throws {
        let url = try #require(EdgeTestEnvironment.brokerURL)
        let prefix = EdgeTestEnvironment.uniquePrefix("edge-shards")
        let spool = EdgeHarness.temporaryDirectory("edge-spool")
        defer { try? FileManager.default.removeItem(atPath: spool) }
        let layout = ShardLayout(count: 2)!
        let collector = try ShardCollector(broker: url, topics: Topics(prefix: prefix), acking: [0])
        defer { collector.close() }
        try collector.client.waitUntilConnected(timeout: 20)
        try await Task.sleep(for: .milliseconds(200))

        var config = EdgeHarness.config(broker: url, prefix: prefix, spool: spool)
        config.windowS = 0.25
        config.publishShards = layout
        let run = try RunningAgent(config, source: ReplaySource(path: EdgeHarness.capture2x, rate: 0, startTime: 36_000))
        #expect(await eventually(timeout: 60) { run.agent.snapshot().sourceFinished })
        let windows = Int(run.agent.snapshot().nextSeq - 1)
        #expect(windows > 2)
        // Shard 0 acked, shard 1 not: exactly shard 1's batches are left in the spool.
        #expect(await eventually(timeout: 60) { run.agent.snapshot().spoolDepth == windows })
        #expect(FileManager.default.fileExists(atPath: spool + "/shard-0") && FileManager.default.fileExists(atPath: spool + "/shard-1"))
        #expect(await eventually(timeout: 60) { run.agent.snapshot().runtime.resent > 0 }, "shard 1 is resent while unacked")

        collector.ack(1)
        #expect(await eventually(timeout: 60) { run.agent.snapshot().spoolDepth == 0 })
        try await run.stop()

        var devices = 0
        for k in 0..<2 {
            let batches = collector.batches(k)
            // Every window of the run reached the shard under its own numbers 1…windows.
            #expect(Set(batches.map(\.seq)) == Set(1...UInt64(windows)), "shard \(k)")
            #expect(batches.allSatisfy { $0.boot == run.agent.boot && $0.gateway == "gw1" })
            #expect(batches.allSatisfy { $0.sightings.allSatisfy { layout.shard(of: $0.device) == k } }, "shard \(k) holds only its devices")
            devices += Set(batches.flatMap(\.sightings).map(\.device)).count
        }
        #expect(devices == EdgeHarness.trackedMACs.count, "every tracked device reached exactly one shard")
        let s = run.agent.snapshot()
        #expect(Int(s.runtime.acked) >= 2 * windows)
    }
}
