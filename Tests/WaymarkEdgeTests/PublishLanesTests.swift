import Foundation
import Testing
import WaymarkCore
@testable import WaymarkEdge

@Suite struct PublishLanesTests {
    let topics = Topics(site: "s")

    func entry(_ n: Int) -> SightingBatch.Entry {
        SightingBatch.Entry(device: DeviceID(String(format: "mac:02-00-00-00-00-%02x", n))!, count: 1, rssiMax: -60,
                            rssiMean: -60, rssiLast: -60, tx: nil, first: 100, last: 100.5)
    }

    func batch(_ seq: UInt64, devices: Range<Int> = 0..<20) -> SightingBatch {
        SightingBatch(gateway: "gw-1", boot: "b", seq: seq, start: 100, end: 101, sightings: devices.map(entry))
    }

    func lanes(_ dir: String, shards: Int) throws -> PublishLanes {
        try PublishLanes(layout: ShardLayout(count: shards)!, spool: .init(directory: dir, maxBytes: 1 << 20, fsync: false),
                         topics: topics, gateway: "gw-1")
    }

    @Test("unsharded: one lane, spool.dir itself, today's topics, the pipeline's sequence numbers")
    func unsharded() throws {
        let dir = EdgeTestData.temporaryDirectory("lanes")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var l = try lanes(dir, shards: 1)
        #expect(l.lanes.count == 1)
        #expect(l.lanes[0].spool.configuration.directory == dir)
        #expect(l.lanes[0].sightingsTopic == "waymark/v1/s/gateways/gw-1/sightings")
        #expect(l.lanes[0].ackTopic == "waymark/v1/s/gateways/gw-1/ack")
        let routed = l.route(batch(41))
        #expect(routed.count == 1 && routed[0].lane == 0 && routed[0].batch == batch(41))
        #expect(!FileManager.default.fileExists(atPath: dir + "/shards"))
    }

    @Test("sharded: a spool, topics and a sequence per shard; every window reaches every shard, empty or not")
    func sharded() throws {
        let dir = EdgeTestData.temporaryDirectory("lanes")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var l = try lanes(dir, shards: 3)
        #expect(l.lanes.map(\.spool.configuration.directory) == (0..<3).map { dir + "/shard-\($0)" })
        #expect(l.lanes.map(\.sightingsTopic) == (0..<3).map { "waymark/v1/s/gateways/gw-1/sightings/\($0)" })
        #expect(l.lanes.map(\.ackTopic) == (0..<3).map { "waymark/v1/s/gateways/gw-1/ack/\($0)" })
        #expect(l.lane(forAckTopic: "waymark/v1/s/gateways/gw-1/ack/2") == 2)
        #expect(l.lane(forAckTopic: "waymark/v1/s/gateways/gw-1/ack") == nil)
        let first = l.route(batch(9))
        let second = l.route(batch(10, devices: 0..<0))
        #expect(first.map(\.lane) == [0, 1, 2] && second.map(\.lane) == [0, 1, 2])
        #expect(first.map(\.batch.seq) == [1, 1, 1] && second.map(\.batch.seq) == [2, 2, 2])
        #expect(first.flatMap(\.batch.sightings).count == 20 && second.allSatisfy(\.batch.sightings.isEmpty))
        #expect(PublishLanes.storedCount(in: dir) == 3)
    }

    @Test("another shard count is refused while the old layout's spools hold batches, and taken once they are empty")
    func layoutChange() throws {
        let dir = EdgeTestData.temporaryDirectory("lanes")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            var l = try lanes(dir, shards: 2)
            for (k, part) in l.route(batch(1)) { try l.lanes[k].spool.append(Array(#"{"boot":"b","seq":1}"#.utf8), boot: "b", seq: part.seq) }
            l.close()
        }
        do {
            _ = try lanes(dir, shards: 4)
            Issue.record("a change of publish.shards with batches spooled was accepted")
        } catch {
            #expect("\(error)".contains("publish.shards 2") && "\(error)".contains("spool_depth 0"), "\(error)")
        }
        do {
            _ = try lanes(dir, shards: 1)
            Issue.record("going back to unsharded with batches spooled was accepted")
        } catch {}
        // Drained (acked), the change goes through and is recorded.
        do {
            let l = try lanes(dir, shards: 2)
            for lane in l.lanes { lane.spool.acknowledge(boot: "b", seq: 1) }
            #expect(l.depth == 0)
            l.close()
        }
        let l = try lanes(dir, shards: 4)
        #expect(l.lanes.count == 4 && PublishLanes.storedCount(in: dir) == 4)
        l.close()
        let back = try lanes(dir, shards: 1)
        #expect(back.lanes.count == 1 && PublishLanes.storedCount(in: dir) == 1)
    }
}
