import Foundation
import Testing
import WaymarkCore
import WaymarkFusion
@testable import WaymarkAggregator

/// Bookkeeping beside fusion: devices heard per write, status history, partition upkeep.
@Suite struct AggregatorUpkeepTests {
    let topics = Topics(site: "line")

    func core() throws -> AggregatorCore {
        var settings = AggregatorCore.Settings()
        settings.clock.toleranceS = 1e9
        settings.clock.maxAgeS = 1e10
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
}
