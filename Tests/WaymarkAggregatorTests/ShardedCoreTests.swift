import Foundation
import Testing
import WaymarkCore
import WaymarkFusion
import WaymarkService
@testable import WaymarkAggregator

/// An aggregator that owns some shards of a sharded site (docs/scaling.md §1), pure core.
@Suite struct ShardedCoreTests {
    let topics = Topics(site: "line")
    let layout = ShardLayout(count: 2)!

    func core(owning owned: [Int]?, workers: Int = 1) throws -> AggregatorCore {
        var settings = AggregatorCore.Settings(clock: .recorded)
        settings.fusionWorkers = workers
        if let owned { settings.shards = try ShardOwnership.make(layout: layout, owned: owned).get() }
        return AggregatorCore(site: try LineVenue.site(count: 4), topics: topics, settings: settings)
    }

    func entry(_ device: DeviceID, at t: Double) -> SightingBatch.Entry {
        SightingBatch.Entry(device: device, count: 1, rssiMax: -60, rssiMean: -60, rssiLast: -60, tx: nil, first: t, last: t + 0.5)
    }

    /// LineVenue devices in shard `k`.
    func devices(inShard k: Int, count: Int = 2) -> [DeviceID] {
        Array((0..<64).map(LineVenue.device).filter { layout.shard(of: $0) == k }.prefix(count))
    }

    func payload(_ b: SightingBatch) throws -> [UInt8] { Array(try JSONEncoder().encode(b)) }

    @Test("an owned shard's batches are taken and acked on its shard's ack topic; each shard numbers its own batches")
    func ownedShard() throws {
        var c = try core(owning: [0, 1])
        let t = 1_700_000_000.0
        for k in 0..<2 {
            let b = SightingBatch(gateway: "gw-1", boot: "b", seq: 1, start: t, end: t + 1,
                                  sightings: devices(inShard: k).map { entry($0, at: t) })
            #expect(c.handle(topic: topics.sightings("gw-1", shard: k), payload: try payload(b), receivedAt: t + 1.5) == .accepted(sightings: 2))
        }
        let sealed = c.sealWrite()
        let write = try #require(sealed)
        #expect(write.progress == [.init(gateway: "gw-1", boot: "b", shard: 0): 1, .init(gateway: "gw-1", boot: "b", shard: 1): 1])
        let acks = c.committed(write)
        #expect(acks.map(\.topic) == [topics.ack("gw-1", shard: 0), topics.ack("gw-1", shard: 1)])
        let again = SightingBatch(gateway: "gw-1", boot: "b", seq: 1, start: t, end: t + 1, sightings: devices(inShard: 1).map { entry($0, at: t) })
        #expect(c.handle(topic: topics.sightings("gw-1", shard: 1), payload: try payload(again), receivedAt: t + 3)
                == .duplicate(gateway: "gw-1", ack: GatewayAck(boot: "b", seq: 1), shard: 1))
        #expect(c.ackPublication(gateway: "gw-1", shard: 1, GatewayAck(boot: "b", seq: 1)).topic == topics.ack("gw-1", shard: 1))
    }

    @Test("batches of another layout or shard are refused as shard_mismatch, not acked")
    func mismatches() throws {
        var c = try core(owning: [1])
        let t = 1_700_000_000.0
        let mine = SightingBatch(gateway: "gw-1", boot: "b", seq: 1, start: t, end: t + 1, sightings: devices(inShard: 1).map { entry($0, at: t) })
        var stray = mine
        stray.sightings.append(entry(devices(inShard: 0)[0], at: t))
        let now = t + 1.5
        #expect(c.handle(topic: topics.sightings("gw-1"), payload: try payload(mine), receivedAt: now) == .rejected(.shardMismatch, gateway: "gw-1"))
        #expect(c.handle(topic: topics.sightings("gw-1", shard: 0), payload: try payload(mine), receivedAt: now) == .rejected(.shardMismatch, gateway: "gw-1"))
        #expect(c.handle(topic: topics.sightings("gw-1", shard: 1), payload: try payload(stray), receivedAt: now) == .rejected(.shardMismatch, gateway: "gw-1"))
        #expect(c.handle(topic: topics.sightings("gw-1", shard: 1), payload: try payload(mine), receivedAt: now) == .accepted(sightings: 2))
        let sealed = c.sealWrite()
        let write = try #require(sealed)
        #expect(write.progress == [.init(gateway: "gw-1", boot: "b", shard: 1): 1])
        #expect(write.rejections.values.reduce(0, +) == 3 && Set(write.rejections.keys.map(\.reason)) == [.shardMismatch])

        // The same checks on batches decoded ahead by the decode threads (`BatchPreparer`).
        var ahead = try core(owning: [1])
        var preparer = BatchPreparer(for: ahead)
        let strayPrepared = try #require(preparer.prepare(topic: topics.sightings("gw-1", shard: 1), payload: try payload(stray)))
        let minePrepared = try #require(preparer.prepare(topic: topics.sightings("gw-1", shard: 1), payload: try payload(mine)))
        #expect(strayPrepared.inTopicShard == false && minePrepared.inTopicShard == true)
        #expect(ahead.handle(topic: topics.sightings("gw-1", shard: 1), payload: try payload(stray), receivedAt: now, prepared: strayPrepared)
                == .rejected(.shardMismatch, gateway: "gw-1"))
        #expect(ahead.handle(topic: topics.sightings("gw-1", shard: 1), payload: try payload(mine), receivedAt: now, prepared: minePrepared)
                == .accepted(sightings: 2))

        var unsharded = try core(owning: nil)
        #expect(unsharded.handle(topic: topics.sightings("gw-1", shard: 0), payload: try payload(mine), receivedAt: now)
                == .rejected(.shardMismatch, gateway: "gw-1"))
        #expect(unsharded.handle(topic: topics.sightings("gw-1"), payload: try payload(stray), receivedAt: now) == .accepted(sightings: 3))
    }

    @Test("two aggregators on the two shards with W fusion workers each record together what one aggregator with 2·W workers records",
          arguments: [1, 2])
    func twoShardsMatchTwoWorkers(workersPerShard: Int) throws {
        // A device's group, (hash mod 2, hash ÷ 2 mod W), is hash mod 2W: the same partition.
        let batches = LineWalk.batches(LineWalk.records(devices: 8, path: [0, 1, 2, 3, 2, 1], dwell: 30, start: 1_700_000_000, regions: 4))
        var owners = [try core(owning: [0], workers: workersPerShard), try core(owning: [1], workers: workersPerShard)]
        var whole = try core(owning: nil, workers: 2 * workersPerShard)
        var seqs: [String: UInt64] = [:]
        var sharded: [WriteBatch] = [], reference: [WriteBatch] = []
        for (i, b) in batches.enumerated() {
            #expect(whole.handle(topic: topics.sightings(b.gateway), payload: try payload(b), receivedAt: b.end + 1) == .accepted(sightings: b.sightings.count))
            for (k, var part) in layout.split(b).enumerated() {
                part.seq = seqs["\(b.gateway)/\(k)", default: 1]
                seqs["\(b.gateway)/\(k)"] = part.seq + 1
                #expect(owners[k].handle(topic: topics.sightings(b.gateway, shard: k), payload: try payload(part), receivedAt: b.end + 1)
                        == .accepted(sightings: part.sightings.count))
            }
            if i % 40 == 39 {
                if let w = whole.sealWrite() { reference.append(w) }
                for k in 0..<2 { if let w = owners[k].sealWrite() { sharded.append(w) } }
            }
        }
        if let w = whole.sealWrite() { reference.append(w) }
        for k in 0..<2 { if let w = owners[k].sealWrite() { sharded.append(w) } }
        let describe = { (writes: [WriteBatch]) in
            (writes.flatMap(\.visits).map { "\($0)" }.sorted(), writes.flatMap(\.transitions).map { "\($0)" }.sorted())
        }
        let (visits, transitions) = describe(sharded)
        #expect(!visits.isEmpty && !transitions.isEmpty)
        #expect(visits == describe(reference).0)
        #expect(transitions == describe(reference).1)
        // Both shards hold devices, and each owner checkpoints only its own.
        let checkpointed = sharded.flatMap(\.checkpoints).map(\.device)
        #expect(Set(checkpointed.map(layout.shard(of:))) == [0, 1])
        for k in 0..<2 { #expect(owners[k].fusion.deviceCount == checkpointed.filter { layout.shard(of: $0) == k }.count(unique: true)) }
    }

    @Test("an aggregator's fusion workers share its shard's devices (the worker comes from the hash divided by the shard count)")
    func workersWithinAShard() throws {
        var c = try core(owning: [1], workers: 2)
        let t = 1_700_000_000.0
        let mine = devices(inShard: 1, count: 12)
        let b = SightingBatch(gateway: "gw-1", boot: "b", seq: 1, start: t, end: t + 1, sightings: mine.map { entry($0, at: t) })
        #expect(c.handle(topic: topics.sightings("gw-1", shard: 1), payload: try payload(b), receivedAt: t + 1.5) == .accepted(sightings: 12))
        // hash mod 2 is 1 for every one of them: with the plain modulo all would sit on worker 1.
        #expect(mine.allSatisfy { FusionWorkers.worker(of: $0, count: 2) == 1 })
        #expect(c.fusion.engine(0).deviceCount > 0 && c.fusion.engine(1).deviceCount > 0,
                "\(c.fusion.engine(0).deviceCount) and \(c.fusion.engine(1).deviceCount)")
        #expect(c.fusion.deviceCount == 12)
    }

    @Test("a restart restores only the owned shards' devices and marks, and records gateway status only with shard 0")
    func restoreAndStatus() throws {
        let t = 1_700_000_000.0
        var all = try core(owning: [0, 1])
        for k in 0..<2 {
            let b = SightingBatch(gateway: "gw-1", boot: "b", seq: 1, start: t, end: t + 1, sightings: devices(inShard: k).map { entry($0, at: t) })
            _ = all.handle(topic: topics.sightings("gw-1", shard: k), payload: try payload(b), receivedAt: t + 1.5)
        }
        let sealed = all.sealWrite()
        let write = try #require(sealed)
        #expect(write.checkpoints.count == 4)
        var second = try core(owning: [1])
        second.restore(devices: write.checkpoints, progress: write.progress, state: nil)
        #expect(second.progress.committed == [.init(gateway: "gw-1", boot: "b", shard: 1): 1])
        #expect(second.fusion.deviceCount == 2)
        let status = Array(#"{"state":"online","gateway":"gw-1","boot":"b","t":1700000002}"#.utf8)
        #expect(second.handle(topic: topics.status("gw-1"), payload: status, receivedAt: t + 2) == .status(gateway: "gw-1"))
        #expect(second.sealWrite()?.statuses.isEmpty ?? true)
        var first = try core(owning: [0])
        #expect(first.handle(topic: topics.status("gw-1"), payload: status, receivedAt: t + 2) == .status(gateway: "gw-1"))
        #expect(first.sealWrite()?.statuses.count == 1)
    }

    @Test("a new owner without a checkpoint of its own starts from the calibration another aggregator of the site saved, worker by worker")
    func calibrationSeed() throws {
        // The whole site with two workers learns the venue from a walk along the line.
        let batches = LineWalk.batches(LineWalk.records(devices: 8, path: [0, 1, 2, 3, 2, 1], dwell: 30, start: 1_700_000_000, regions: 4))
        var whole = try core(owning: nil, workers: 2)
        var last: WriteBatch?
        for b in batches {
            _ = whole.handle(topic: topics.sightings(b.gateway), payload: try payload(b), receivedAt: b.end + 1)
            if let w = whole.sealWrite() { last = w }
        }
        let state = try #require(last?.aggregatorState)
        let workers = try #require(state.fusionWorkers)
        #expect(workers.count == 2)
        let learned = (0..<2).map { whole.fusion.engine($0).calibration.updates }
        #expect(learned.allSatisfy { $0 > 0 }, "\(learned)")

        let seed = AggregatorStore.calibrationSeed(from: state)
        #expect(seed.count == 2 && seed.allSatisfy { $0.nextTick == -1 && $0.gatewayHealth == nil && $0.calibration != nil })
        // Three workers take the saved two in turn; the clock is not carried over.
        var moved = try core(owning: [1], workers: 3)
        moved.restore(devices: [], progress: [:], state: nil, calibrationSeed: seed)
        #expect((0..<3).map { moved.fusion.engine($0).calibration.updates } == [learned[0], learned[1], learned[0]])
        #expect(moved.fusion.engine(0).calibration == whole.fusion.engine(0).calibration)
        // Without a seed: the site file's values; with a state of its own, the seed is not used.
        var fresh = try core(owning: [1])
        fresh.restore(devices: [], progress: [:], state: nil)
        #expect(fresh.fusion.engine(0).calibration.updates == 0)
        var own = AggregatorCheckpoint()
        own.fusionWorkers = [FusionWorkerCheckpoint(nextTick: -1, calibration: nil, gatewayHealth: nil)]
        var resumed = try core(owning: [1])
        resumed.restore(devices: [], progress: [:], state: own, calibrationSeed: seed)
        #expect(resumed.fusion.engine(0).calibration.updates == 0)
        // A checkpoint from before workers holds one calibration.
        var single = AggregatorCheckpoint()
        single.calibration = workers[1].calibration
        #expect(AggregatorStore.calibrationSeed(from: single).map(\.calibration) == [workers[1].calibration])
        #expect(AggregatorStore.calibrationSeed(from: AggregatorCheckpoint()).isEmpty)
    }
}

private extension Array where Element: Hashable {
    func count(unique: Bool) -> Int { unique ? Set(self).count : count }
}

@Suite struct ShardConfigTests {
    func load(_ flags: [String: String], env: [String: String] = [:]) throws -> AggregatorConfig {
        try AggregatorConfig.load(ConfigLayers(filePath: nil, envPrefix: "WAYMARK_AGGREGATOR", flags: ["site": "s.yaml"].merging(flags) { $1 },
                                               environment: env, knownKeys: AggregatorConfig.keys))
    }

    @Test("shards.count and shards.own: unsharded by default, every shard unless listed, lists and ranges; errors name the key")
    func keys() throws {
        let plain = try load([:])
        #expect(!plain.shards.layout.isSharded && plain.shards.ownsAll && plain.shards.checkpointKey == "")
        let all = try load(["shards.count": "4"])
        #expect(all.shards.owned == [0, 1, 2, 3] && all.shards.checkpointKey == "")
        let some = try load(["shards.count": "16"], env: ["WAYMARK_AGGREGATOR_SHARDS_OWN": "8-11, 3,3"])
        #expect(some.shards.owned == [3, 8, 9, 10, 11] && some.shards.checkpointKey == "3,8,9,10,11/16")
        #expect(!some.shards.recordsGatewayStatus && !some.shards.ownsAll)
        #expect(try load(["shards.count": "2", "shards.own": "0"]).shards.recordsGatewayStatus)
        for (flags, message) in [(["shards.count": "0"], "--shards-count: 0 is not a shard count"),
                                 (["shards.count": "2", "shards.own": "2"], "--shards-own: shard 2 is not one of the 2 shards"),
                                 (["shards.count": "4", "shards.own": "3-1"], "--shards-own: '3-1' is not a shard number or a range"),
                                 (["shards.own": "x"], "--shards-own: 'x' is not")] {
            do {
                _ = try load(flags)
                Issue.record("\(flags) was accepted")
            } catch {
                #expect("\(error)".hasPrefix(message), "\(error)")
            }
        }
    }

    @Test("conflicts: another running aggregator's shards that this one owns too; another shard count conflicts on all")
    func conflicts() throws {
        let mine = try ShardOwnership.make(layout: ShardLayout(count: 4)!, owned: [1, 2]).get()
        func status(_ shards: [Int]?, count: Int? = 4, state: GatewayStatus.State = .online, instance: String? = "other") -> ServiceStatus {
            ServiceStatus(state: state, service: "waymark-aggregator", site: "s", shards: shards, shardCount: count, instance: instance)
        }
        #expect(mine.conflicts(with: status([2, 3]), ownInstance: "me") == [2])
        #expect(mine.conflicts(with: status([0, 3]), ownInstance: "me").isEmpty)
        #expect(mine.conflicts(with: status([0], count: 2), ownInstance: "me") == [1, 2])
        #expect(mine.conflicts(with: status([1, 2], instance: "me"), ownInstance: "me").isEmpty, "its own status")
        #expect(mine.conflicts(with: status([1, 2], state: .offline), ownInstance: "me").isEmpty, "a stopped one")
        #expect(mine.conflicts(with: status(nil, count: nil, instance: nil), ownInstance: "me").isEmpty, "an unsharded one's status")
        #expect(ShardOwnership.all(.single).conflicts(with: status([1]), ownInstance: "me").isEmpty)
        // The status carries them in its JSON, and reads back.
        let json = status([2, 3]).jsonBytes
        #expect(String(decoding: json, as: UTF8.self).contains(#""shards":[2,3],"shard_count":4,"instance":"other""#))
        #expect(try JSONDecoder().decode(ServiceStatus.self, from: Data(json)) == status([2, 3]))
    }

    @Test("metrics: one shard_owned gauge per owned shard (shard 0 unsharded), and the conflicts counter")
    func metrics() throws {
        let site = try LineVenue.site(count: 4)
        var config = try load(["shards.count": "4", "shards.own": "1,3"])
        let text = String(decoding: AggregatorService(config: config, site: site).metricsText(), as: UTF8.self)
        #expect(text.contains(#"waymark_aggregator_shard_owned{shard="1"} 1"#) && text.contains(#"waymark_aggregator_shard_owned{shard="3"} 1"#), "\(text)")
        #expect(!text.contains(#"shard_owned{shard="0"}"#) && text.contains("waymark_aggregator_shard_conflicts_total 0"))
        config = try load([:])
        let plain = String(decoding: AggregatorService(config: config, site: site).metricsText(), as: UTF8.self)
        #expect(plain.contains(#"waymark_aggregator_shard_owned{shard="0"} 1"#))
    }

    @Test("subscriptions: the owned shards, the status, and the other layout's batches (to refuse them loudly)")
    func subscriptions() throws {
        let t = Topics(site: "s")
        let owned = try ShardOwnership.make(layout: ShardLayout(count: 4)!, owned: [1, 3]).get()
        #expect(owned.subscriptions(t) == ["waymark/v1/s/gateways/+/sightings", "waymark/v1/s/gateways/+/sightings/1",
                                           "waymark/v1/s/gateways/+/sightings/3", "waymark/v1/s/gateways/+/status"])
        #expect(ShardOwnership.all(.single).subscriptions(t) == ["waymark/v1/s/gateways/+/sightings", "waymark/v1/s/gateways/+/sightings/+",
                                                                 "waymark/v1/s/gateways/+/status"])
        #expect(owned.accepts(topicShard: 1) && !owned.accepts(topicShard: 0) && !owned.accepts(topicShard: nil))
        #expect(ShardOwnership.all(.single).accepts(topicShard: nil) && !ShardOwnership.all(.single).accepts(topicShard: 0))
    }
}
