import Foundation
import Testing
import WaymarkCore
import WaymarkFusion
import WaymarkService
@testable import WaymarkAggregator

/// Bookkeeping beside fusion: devices heard per write, status history, partition upkeep.
@Suite struct AggregatorUpkeepTests {
    let topics = Topics(site: "line")

    func core() throws -> AggregatorCore {
        let settings = AggregatorCore.Settings(clock: .recorded)
        return AggregatorCore(site: try LineVenue.site(count: 4), topics: topics, settings: settings)
    }

    @Test func eachWriteCarriesTheFirstAndLastSightingOfEveryDeviceHeardSinceTheLast() throws {
        var c = try core()
        let records = LineWalk.records(devices: 3, path: [0, 1, 2], dwell: 20, start: 1_700_000_000, regions: 4)
        let batches = LineWalk.batches(records)
        let half = batches.count / 2
        var writes: [WriteBatch] = []
        for (i, b) in batches.enumerated() {
            _ = c.handle(topic: topics.sightings(b.gateway), payload: Array(try JSONEncoder().encode(b)), receivedAt: b.end + 1)
            if i == half - 1, let w = c.sealWrite() { writes.append(w) }
        }
        if let w = c.sealWrite() { writes.append(w) }
        #expect(writes.count == 2)
        for (w, part) in zip(writes, [batches[..<half], batches[half...]]) {
            var expected: [DeviceID: (first: Double, last: Double)] = [:]
            for e in part.flatMap(\.sightings) {
                let seen = expected[e.device] ?? (.infinity, -.infinity)
                expected[e.device] = (min(seen.first, e.first), max(seen.last, e.last))
            }
            #expect(Set(w.devices.keys) == Set(expected.keys))
            for (d, seen) in expected {
                #expect(w.devices[d]?.first == seen.first && w.devices[d]?.last == seen.last)
            }
            // Every device heard is checkpointed in the same write.
            #expect(Set(w.checkpoints.map(\.device)).isSuperset(of: expected.keys))
        }
    }

    func status(_ state: GatewayStatus.State, boot: String?, t: Double?) throws -> [UInt8] {
        Array(try JSONEncoder().encode(GatewayStatus(state: state, gateway: "gw-1", boot: boot, t: t)))
    }

    @Test func aRetainedStatusWithoutATimeIsRecordedAtItsReceiveTimeOnce() throws {
        var c = try core()
        let topic = topics.status("gw-1")
        _ = c.handle(topic: topic, payload: try status(.offline, boot: "b1", t: nil), receivedAt: 1_700_000_100, retained: true)
        let sealed = c.sealWrite()
        let first = try #require(sealed)
        #expect(first.statuses.map(\.receivedAt) == [1_700_000_100])
        #expect(first.statuses.first?.status.state == .offline)
        // The same retained status again (a reconnect): already in the history.
        _ = c.handle(topic: topic, payload: try status(.offline, boot: "b1", t: nil), receivedAt: 1_700_000_200, retained: true)
        #expect(c.sealWrite()?.statuses.isEmpty ?? true)
        // After a restart that restored the history, still nothing new ...
        var restarted = try core()
        restarted.restore(devices: [], progress: [:], state: nil, statuses: ["gw-1": StatusSummary(state: .offline, boot: "b1")])
        _ = restarted.handle(topic: topic, payload: try status(.offline, boot: "b1", t: nil), receivedAt: 1_700_000_300, retained: true)
        #expect(restarted.sealWrite()?.statuses.isEmpty ?? true)
        // ... but a different one is recorded.
        _ = restarted.handle(topic: topic, payload: try status(.online, boot: "b2", t: nil), receivedAt: 1_700_000_400, retained: true)
        #expect(restarted.sealWrite()?.statuses.map(\.receivedAt) == [1_700_000_400])
        // A live status without a time is recorded at its receive time as before.
        _ = restarted.handle(topic: topic, payload: try status(.online, boot: "b2", t: nil), receivedAt: 1_700_000_500)
        #expect(restarted.sealWrite()?.statuses.map(\.receivedAt) == [1_700_000_500])
    }

    @Test func partitionUpkeepRunsAtStartThenOncePerUTCDayAndRetriesAfterAFailure() {
        let day = PartitionUpkeep.day
        let midnight = 20_000 * day
        var u = PartitionUpkeep(retryS: 600)
        #expect(u.isDue(at: midnight + 10))
        u.succeeded(at: midnight + 10)
        #expect(!u.isDue(at: midnight + day - 1))
        #expect(u.isDue(at: midnight + day))
        u.failed(at: midnight + day)
        #expect(!u.isDue(at: midnight + day + 599))
        #expect(u.isDue(at: midnight + day + 600))
        u.succeeded(at: midnight + day + 600)
        #expect(!u.isDue(at: midnight + 2 * day - 1))
        #expect(u.isDue(at: midnight + 3 * day))
    }

    @Test("history.retention_days: 0 keeps the history, 31 days or more drops whole months, anything else is refused")
    func historyRetentionIsValidated() throws {
        func load(_ flags: [String: String]) throws -> AggregatorConfig {
            try AggregatorConfig.load(ConfigLayers(filePath: nil, envPrefix: "WAYMARK_AGGREGATOR", flags: ["site": "s.yaml"].merging(flags) { $1 },
                                                   environment: [:], knownKeys: AggregatorConfig.keys))
        }
        #expect(try load([:]).historyRetentionDays == 0, "kept forever by default")
        #expect(try load(["history.retention_days": "400"]).historyRetentionDays == 400)
        for bad in ["30", "-1", "a year"] {
            do {
                _ = try load(["history.retention_days": bad])
                Issue.record("history.retention_days = \(bad) is refused")
            } catch {
                // Named as it was given: here a flag.
                #expect("\(error)".contains("--history-retention-days"), "\(error)")
            }
        }
        do {
            _ = try load(["history.retention_days": "7"])
        } catch {
            #expect("\(error)".contains("at least 31 days"), "\(error)")
        }
    }

    @Test("the history upkeep's days are UTC days")
    func historyUpkeepDays() {
        let late = Date(timeIntervalSince1970: 1_782_863_999)  // 2026-06-30T23:59:59Z
        #expect(AggregatorStore.utcDate(AggregatorStore.utcDayStart(late)) == "2026-06-30")
        #expect(AggregatorStore.utcDate(AggregatorStore.utcDayStart(late) - 31 * AggregatorStore.day) == "2026-05-30")
    }
}
