import Foundation
import Testing
import WaymarkCore
import WaymarkFusion
@testable import WaymarkAggregator

@Suite struct AggregatorCoreTests {
    let topics = Topics(site: "line")

    func core(regions: Int = 4, monitored: Int = 20) throws -> AggregatorCore {
        var settings = AggregatorCore.Settings(clock: .recorded)
        settings.maxPayloadBytes = 4096
        return AggregatorCore(site: try LineVenue.site(count: regions, monitored: monitored), topics: topics, settings: settings)
    }

    func payload(_ b: SightingBatch) throws -> [UInt8] { Array(try JSONEncoder().encode(b)) }

    @Test func invalidPayloadsAreRejectedByReason() throws {
        var c = try core()
        let good = SightingBatch(gateway: "gw-1", boot: "b", seq: 1, start: 1_700_000_000, end: 1_700_000_001, sightings: [])
        var wrongVersion = good
        wrongVersion.v = 99
        var backwards = good
        backwards.end = good.start - 5
        let now = 1_700_000_002.0
        #expect(c.handle(topic: topics.sightings("gw-2"), payload: try payload(good), receivedAt: now) == .rejected(.gatewayMismatch, gateway: "gw-2"))
        #expect(c.handle(topic: topics.sightings("gw-9"), payload: try payload(good), receivedAt: now) == .rejected(.unknownGateway, gateway: "gw-9"))
        #expect(c.handle(topic: topics.sightings("gw-1"), payload: Array("{not json".utf8), receivedAt: now) == .rejected(.malformed, gateway: "gw-1"))
        #expect(c.handle(topic: topics.sightings("gw-1"), payload: Array(repeating: 0x20, count: 5000), receivedAt: now) == .rejected(.oversize, gateway: "gw-1"))
        #expect(c.handle(topic: topics.sightings("gw-1"), payload: try payload(wrongVersion), receivedAt: now) == .rejected(.version, gateway: "gw-1"))
        #expect(c.handle(topic: topics.sightings("gw-1"), payload: try payload(backwards), receivedAt: now) == .rejected(.badTimes, gateway: "gw-1"))
        var next = good
        next.seq = 2
        #expect(c.handle(topic: topics.sightings("gw-1"), payload: try payload(next), receivedAt: now) == .accepted(sightings: 0))
        #expect(c.handle(topic: "elsewhere/x", payload: [], receivedAt: now) == .ignored)
        #expect(c.counts.total == 6)
        let sealed = c.sealWrite()
        let write = try #require(sealed)
        #expect(write.rejections.values.reduce(0, +) == 6)
        #expect(Set(write.rejections.keys.map(\.reason)) == [.gatewayMismatch, .unknownGateway, .malformed, .oversize, .version, .badTimes])
        // The bad-times batch (seq 1: resending cannot fix it) and the good one are covered by the mark.
        #expect(write.progress == [.init(gateway: "gw-1", boot: "b"): 2])
    }

    @Test func duplicatesAreDroppedAndReackedOnceCommitted() throws {
        var c = try core()
        let b = SightingBatch(gateway: "gw-0", boot: "b", seq: 1, start: 1_700_000_000, end: 1_700_000_001, sightings: [])
        #expect(c.handle(topic: topics.sightings("gw-0"), payload: try payload(b), receivedAt: 1_700_000_002) == .accepted(sightings: 0))
        #expect(c.handle(topic: topics.sightings("gw-0"), payload: try payload(b), receivedAt: 1_700_000_002) == .duplicate(gateway: "gw-0", ack: nil))
        let sealed = c.sealWrite()
        let write = try #require(sealed)
        let acks = c.committed(write)
        #expect(acks.map(\.topic) == [topics.ack("gw-0")])
        #expect(String(decoding: acks[0].payload, as: UTF8.self) == #"{"boot":"b","seq":1}"#)
        #expect(c.handle(topic: topics.sightings("gw-0"), payload: try payload(b), receivedAt: 1_700_000_003)
                == .duplicate(gateway: "gw-0", ack: GatewayAck(boot: "b", seq: 1)))
    }

    @Test func aBatchAfterAGapIsParkedAndTheMissingOnesAskedForUntilTheGapTimesOut() throws {
        var c = try core()  // gap timeout 60 s
        func batch(_ seq: UInt64) -> SightingBatch {
            SightingBatch(gateway: "gw-0", boot: "b", seq: seq, start: 1_700_000_000 + Double(seq), end: 1_700_000_001 + Double(seq), sightings: [])
        }
        let key = ProgressTracker.Key(gateway: "gw-0", boot: "b")
        let t0 = 1_700_000_100.0
        #expect(c.handle(topic: topics.sightings("gw-0"), payload: try payload(batch(3)), receivedAt: t0) == .accepted(sightings: 0))
        #expect(c.parkedBatches == 1)
        #expect(c.progress.processed[key] == nil)
        // The gateway is asked for 1 and 2 at once (nothing committed yet: seq 0).
        let request = c.takePublications().filter { $0.topic == topics.ack("gw-0") }
        #expect(request.map { String(decoding: $0.payload, as: UTF8.self) } == [#"{"boot":"b","seq":0,"resend_from":1,"resend_to":3}"#])
        // A second copy of the parked batch is a duplicate.
        #expect(c.handle(topic: topics.sightings("gw-0"), payload: try payload(batch(3)), receivedAt: t0 + 1) == .duplicate(gateway: "gw-0", ack: nil))
        // The resend brings 1 and 2; 3 follows from the park.
        for s in 1...2 as ClosedRange<UInt64> {
            #expect(c.handle(topic: topics.sightings("gw-0"), payload: try payload(batch(s)), receivedAt: t0 + 2) == .accepted(sightings: 0))
        }
        #expect(c.parkedBatches == 0)
        #expect(c.progress.processed[key] == 3)
        // 4 and 5 are lost for good: 6 is parked, asked about again every 5 s, then taken after the timeout.
        #expect(c.handle(topic: topics.sightings("gw-0"), payload: try payload(batch(6)), receivedAt: t0 + 10) == .accepted(sightings: 0))
        c.releaseDue(at: t0 + 12)
        c.releaseDue(at: t0 + 16)
        let asked = c.takePublications().filter { $0.topic == topics.ack("gw-0") }
        #expect(asked.count == 2)
        #expect(c.progress.processed[key] == 3)
        c.releaseDue(at: t0 + 71)
        #expect(c.progress.skipped == 2)
        #expect(c.progress.processed[key] == 6)
        #expect(c.resendRequests == 3)
    }

    /// Binary: what the aggregator stores since schema 0005; JSON: rows written before it.
    @Test(arguments: ["binary", "json"])
    func restoringACheckpointContinuesLikeAnUninterruptedRun(encoding: String) throws {
        let records = LineWalk.records(devices: 3, path: [0, 1, 2, 3, 2, 1], dwell: 40, start: 1_700_000_000, regions: 4)
        let batches = LineWalk.batches(records)
        var straight = try core()
        var first = try core()
        let split = batches.count / 2
        var visitsStraight: [FusionOutput.Visit] = [], visitsResumed: [FusionOutput.Visit] = []
        for (i, b) in batches.enumerated() {
            _ = straight.handle(topic: topics.sightings(b.gateway), payload: try payload(b), receivedAt: b.end + 1)
            if i == split - 1 { visitsStraight += straight.sealWrite()?.visits ?? [] }
            if i < split { _ = first.handle(topic: topics.sightings(b.gateway), payload: try payload(b), receivedAt: b.end + 1) }
        }
        let sealedFirst = first.sealWrite()
        let saved = try #require(sealedFirst)
        // Round-trip the checkpoints through the encoding PostgreSQL stores them in (the ordinal
        // is stored in its own column) and load them in the engine's order, as the store does.
        let devices = try saved.checkpoints.sorted { $0.ordinal < $1.ordinal }.map { cp in
            var back = encoding == "binary"
                ? try CompactBinaryDecoder().decode(DeviceCheckpoint.self, from: CompactBinaryEncoder().encode(cp))
                : try JSONDecoder().decode(DeviceCheckpoint.self, from: JSONEncoder().encode(cp))
            back.ordinal = cp.ordinal
            return back
        }
        #expect(Set(devices) == Set(saved.checkpoints))
        var resumed = try core()
        resumed.restore(devices: devices, progress: saved.progress, state: saved.aggregatorState)
        for b in batches {
            _ = resumed.handle(topic: topics.sightings(b.gateway), payload: try payload(b), receivedAt: b.end + 1)
        }
        visitsStraight = straight.sealWrite()?.visits ?? []
        visitsResumed = resumed.sealWrite()?.visits ?? []
        #expect(!visitsStraight.isEmpty)
        #expect(visitsResumed == visitsStraight)
        #expect(resumed.counts[.duplicate] == split)
    }

    @Test func afterARestartEveryGatewayIsAwaitedSoABacklogIsFusedAsWithoutTheRestart() throws {
        let records = LineWalk.records(devices: 3, path: [0, 1, 2, 3, 2, 1], dwell: 40, start: 1_700_000_000, regions: 4)
        let batches = LineWalk.batches(records)
        func reordering() throws -> AggregatorCore {
            var settings = AggregatorCore.Settings(clock: .recorded)
            settings.maxPayloadBytes = 4096
            settings.reorderWindowS = 2
            return AggregatorCore(site: try LineVenue.site(count: 4, monitored: 20), topics: topics, settings: settings)
        }
        let split = batches.count / 2
        var straight = try reordering(), first = try reordering()
        for (i, b) in batches.enumerated() {
            _ = straight.handle(topic: topics.sightings(b.gateway), payload: try payload(b), receivedAt: b.end + 1)
            if i == split - 1 { _ = straight.sealWrite() }
            if i < split { _ = first.handle(topic: topics.sightings(b.gateway), payload: try payload(b), receivedAt: b.end + 1) }
        }
        straight.releaseAll()
        let expected = straight.sealWrite()?.visits ?? []
        let sealed = first.sealWrite()
        let saved = try #require(sealed)
        // The aggregator was down for a minute; the gateways' backlogs then arrive one gateway
        // after another (the broker's queue, or resends), each far ahead of the others in evidence.
        let restartedAt = (batches.last?.end ?? 0) + 60
        let backlog = batches.sorted { ($0.gateway, $0.seq) < ($1.gateway, $1.seq) }
        func resume(holding: Bool) throws -> [FusionOutput.Visit] {
            var c = try reordering()
            c.restore(devices: saved.checkpoints.sorted { $0.ordinal < $1.ordinal }, progress: saved.progress,
                      state: saved.aggregatorState, now: holding ? restartedAt : nil)
            for (i, b) in backlog.enumerated() {
                _ = c.handle(topic: topics.sightings(b.gateway), payload: try payload(b), receivedAt: restartedAt + Double(i) * 0.001)
            }
            c.releaseAll()
            #expect(c.lateBatches == 0 || !holding)
            return c.sealWrite()?.visits ?? []
        }
        #expect(!expected.isEmpty)
        #expect(try resume(holding: true) == expected)
        // Without waiting for every gateway, the first backlog runs ahead and the others are fused late.
        #expect(try resume(holding: false) != expected)
    }

    @Test func monitoredSetsRotateAndNeverExceedTheSize() throws {
        var c = try core(regions: 8, monitored: 3)
        let records = LineWalk.records(devices: 1, path: Array(0..<8), dwell: 45, start: 1_700_000_000, regions: 8)
        var sets: [[String]] = []
        for b in LineWalk.batches(records) {
            _ = c.handle(topic: topics.sightings(b.gateway), payload: try payload(b), receivedAt: b.end + 1)
            for p in c.takePublications() where p.topic.hasSuffix("/monitored") {
                let json = try JSONSerialization.jsonObject(with: Data(p.payload)) as! [String: Any]
                let regions = (json["regions"] as! [[String: Any]]).map { $0["region"] as! String }
                #expect(regions.count <= 3)
                let beacon = (json["regions"] as! [[String: Any]])[0]["ibeacon"] as? [String: Any]
                #expect(beacon?["uuid"] as? String == LineVenue.uuid.lowercased() || beacon?["uuid"] as? String == LineVenue.uuid)
                #expect(p.retain)
                sets.append(regions)
            }
        }
        #expect(sets.count >= 4)
        #expect(sets.first?.first == "r0")
        #expect(sets.last?.first == "r7")
    }

    @Test("a device whose live region changed has its state published at once; the others wait for the interval")
    func liveChangesArePublishedAtOnce() throws {
        var c = try core(regions: 4)
        let records = LineWalk.records(devices: 2, path: [0, 1, 2, 3], dwell: 30, start: 1_700_000_000, regions: 4)
        var atOnce: [String] = [], regionsAtOnce: [String?] = [], changesAtOnce = 0, later = 0
        for (i, b) in LineWalk.batches(records).enumerated() {
            _ = c.handle(topic: topics.sightings(b.gateway), payload: try payload(b), receivedAt: b.end + 1)
            if c.hasLiveChanges {
                let out = c.takeLiveChanges()
                #expect(!c.hasLiveChanges)
                let states = out.filter { $0.topic.hasSuffix("/state") }
                #expect(!states.isEmpty, "a live change publishes its device's state")
                #expect(c.publishedLiveChanges.count == states.count)
                changesAtOnce += c.publishedLiveChanges.count
                for p in states {
                    atOnce.append(p.topic)
                    let json = try JSONSerialization.jsonObject(with: Data(p.payload)) as! [String: Any]
                    regionsAtOnce.append(json["current_region"] as? String)
                }
            }
            if i % 20 == 19 {
                // The interval's round: the devices heard since, none of them with a live change
                // not yet published.
                _ = c.takePublications()
                later += c.publishedLiveChanges.count
            }
        }
        #expect(Set(atOnce) == [topics.deviceState(LineVenue.device(0)), topics.deviceState(LineVenue.device(1))])
        // Each device's four regions, each shown once at once (the change itself, never a repeat).
        #expect(regionsAtOnce.compactMap { $0 }.sorted() == ["r0", "r0", "r1", "r1", "r2", "r2", "r3", "r3"], "\(regionsAtOnce)")
        #expect(changesAtOnce == 8 && later == 0)
    }

    @Test("each published change of a device's live region comes with the evidence time that decided it, once")
    func publishedLiveChangesCarryTheirEvidenceTime() throws {
        var c = try core(regions: 4)
        let records = LineWalk.records(devices: 1, path: [0, 1, 2, 3], dwell: 40, start: 1_700_000_000, regions: 4)
        var shown: [String?] = [], changes: [Double] = [], lastEnd = 0.0
        for b in LineWalk.batches(records) {
            _ = c.handle(topic: topics.sightings(b.gateway), payload: try payload(b), receivedAt: b.end + 1)
            lastEnd = max(lastEnd, b.end)
            let out = c.takePublications().filter { $0.topic.hasSuffix("/state") }
            for p in out {
                let json = try JSONSerialization.jsonObject(with: Data(p.payload)) as! [String: Any]
                let region = json["current_region"] as? String
                if shown.last.map({ $0 != region }) ?? true { shown.append(region) }
            }
            for t in c.publishedLiveChanges {
                // Evidence of a second already fused, at most the batch's window behind (plus the second itself).
                #expect(t <= lastEnd + 1 && t >= lastEnd - 3, "evidence time \(t), batches up to \(lastEnd)")
                changes.append(t)
            }
            if out.isEmpty { #expect(c.publishedLiveChanges.isEmpty, "no state published, no change reported") }
        }
        #expect(shown.compactMap { $0 } == ["r0", "r1", "r2", "r3"], "\(shown)")
        // One change per region the live state moved to, in time order (a state published before
        // the tracker's first live output shows none: that is no change of the live region).
        let live = Array(shown.drop { $0 == nil })
        #expect(changes.count == live.count, "\(changes.count) changes for \(shown)")
        #expect(changes == changes.sorted())
    }
}

@Suite struct WriteBatchMergeTests {
    @Test func mergingKeepsEveryRowTheLatestCheckpointsAndTheHighestMarks() throws {
        let settings = AggregatorCore.Settings(clock: .recorded)
        let topics = Topics(site: "line")
        var c = AggregatorCore(site: try LineVenue.site(count: 4), topics: topics, settings: settings)
        let batches = LineWalk.batches(LineWalk.records(devices: 2, path: [0, 1, 2, 3, 2], dwell: 40, start: 1_700_000_000, regions: 4))
        var writes: [WriteBatch] = []
        for (i, b) in batches.enumerated() {
            _ = c.handle(topic: topics.sightings(b.gateway), payload: Array(try JSONEncoder().encode(b)), receivedAt: b.end + 1)
            if i % 50 == 49, let w = c.sealWrite() { writes.append(w) }
        }
        if let w = c.sealWrite() { writes.append(w) }
        var merged = writes[0]
        for w in writes.dropFirst() { merged.absorb(w) }
        #expect(merged.visits == writes.flatMap(\.visits))
        #expect(merged.sightingCount == writes.reduce(0) { $0 + $1.sightingCount })
        #expect(merged.ingest.values.reduce(0) { $0 + $1.batches } == batches.count)
        #expect(merged.checkpoints.count == 2)
        #expect(merged.checkpoints.map(\.device).sorted() == [LineVenue.device(0), LineVenue.device(1)])
        let lastFor = { (d: DeviceID) in writes.last { w in w.checkpoints.contains { $0.device == d } }!.checkpoints.first { $0.device == d }! }
        #expect(merged.checkpoints.allSatisfy { $0 == lastFor($0.device) })
        for g in 0..<4 {
            let key = ProgressTracker.Key(gateway: "gw-\(g)", boot: "boot-1")
            #expect(merged.progress[key] == writes.compactMap { $0.progress[key] }.max())
        }
        #expect(merged.aggregatorState == writes.last!.aggregatorState)
    }
}
