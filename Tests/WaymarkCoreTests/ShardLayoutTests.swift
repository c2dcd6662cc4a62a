import Foundation
import Testing
import WaymarkCore

@Suite struct ShardLayoutTests {
    func entry(_ device: String) -> SightingBatch.Entry {
        SightingBatch.Entry(device: DeviceID(device)!, count: 1, rssiMax: -60, rssiMean: -60, rssiLast: -60, tx: nil,
                            first: 100, last: 100.5)
    }

    @Test("the shard of a device is FNV-1a-64 of its id modulo the count, the same as the fusion workers' split")
    func hashIsPinned() throws {
        // Values computed independently (Python) for FusionWorkersTests: 2, 3 and 8 shards.
        let mac = try #require(DeviceID("mac:02-00-00-00-00-0a"))
        #expect([2, 3, 8].map { ShardLayout(count: $0)!.shard(of: mac) } == [0, 1, 0])
        let beacon = try #require(DeviceID("ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:1:2"))
        #expect([2, 3, 8].map { ShardLayout(count: $0)!.shard(of: beacon) } == [0, 2, 6])
        #expect(ShardLayout.single.shard(of: beacon) == 0)
        #expect(ShardLayout(count: 0) == nil && ShardLayout(count: ShardLayout.maxCount + 1) == nil)
    }

    @Test("split: one batch per shard in shard order, every sighting in its device's shard, empty shards included")
    func split() throws {
        let layout = try #require(ShardLayout(count: 3))
        let ids = (0..<30).map { String(format: "mac:02-00-00-00-00-%02x", $0) }
        let batch = SightingBatch(gateway: "gw-1", boot: "b", seq: 7, start: 100, end: 101, sightings: ids.map(entry))
        let parts = layout.split(batch)
        #expect(parts.count == 3)
        for (k, part) in parts.enumerated() {
            #expect(part.gateway == "gw-1" && part.boot == "b" && part.start == 100 && part.end == 101)
            #expect(part.sightings.allSatisfy { layout.shard(of: $0.device) == k })
        }
        // Nothing lost or repeated, and each shard keeps the batch's order.
        #expect(parts.flatMap(\.sightings).map(\.device.rawValue).sorted() == ids.sorted())
        for part in parts {
            let order = part.sightings.map { ids.firstIndex(of: $0.device.rawValue)! }
            #expect(order == order.sorted())
        }
        let empty = layout.split(SightingBatch(gateway: "gw-1", boot: "b", seq: 8, start: 101, end: 102, sightings: []))
        #expect(empty.count == 3 && empty.allSatisfy(\.sightings.isEmpty))
        #expect(ShardLayout.single.split(batch) == [batch])
    }

    @Test("topics: sightings and acks carry the shard as a last level; the parser takes only canonical shard numbers")
    func topics() {
        let t = Topics(site: "s")
        #expect(t.sightings("gw-1") == "waymark/v1/s/gateways/gw-1/sightings")
        #expect(t.sightings("gw-1", shard: 3) == "waymark/v1/s/gateways/gw-1/sightings/3")
        #expect(t.ack("gw-1", shard: 0) == "waymark/v1/s/gateways/gw-1/ack/0")
        #expect(t.allSightings(shard: 2) == "waymark/v1/s/gateways/+/sightings/2")
        #expect(t.gatewayTopic("waymark/v1/s/gateways/gw-1/sightings")! == ("gw-1", "sightings", nil))
        #expect(t.gatewayTopic("waymark/v1/s/gateways/gw-1/sightings/12")! == ("gw-1", "sightings", 12))
        #expect(t.gatewayTopic("waymark/v1/s/gateways/gw-1/ack/0")! == ("gw-1", "ack", 0))
        for bad in ["waymark/v1/s/gateways/gw-1/sightings/01", "waymark/v1/s/gateways/gw-1/sightings/-1",
                    "waymark/v1/s/gateways/gw-1/sightings/", "waymark/v1/s/gateways/gw-1/sightings/x",
                    "waymark/v1/s/gateways/gw-1/sightings/1024", "waymark/v1/s/gateways/gw-1/sightings/1/2",
                    "waymark/v1/s/gateways//sightings/1", "waymark/v1/other/gateways/gw-1/sightings/1"] {
            #expect(t.gatewayTopic(bad) == nil, "\(bad)")
        }
    }
}

@Suite struct AggregatorStatusTopicTests {
    @Test("the owner of shard 0 (or of the whole site) uses …/aggregator/status, the others a topic of their own")
    func topics() {
        let t = Topics(site: "s")
        #expect(t.aggregatorStatus(owning: [0]) == "waymark/v1/s/aggregator/status")
        #expect(t.aggregatorStatus(owning: [0, 1, 2]) == "waymark/v1/s/aggregator/status")
        #expect(t.aggregatorStatus(owning: [1, 3]) == "waymark/v1/s/aggregator/status/1-3")
    }
}
