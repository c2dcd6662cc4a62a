import Foundation
import Testing
import WaymarkAggregator
import WaymarkConfig
import WaymarkCore
import WaymarkPostgres

@Suite("Aggregator rejections and monitored sets", .enabled(if: AggregatorTestServices.shouldRun), .serialized)
struct AggregatorRejectionTests {
    @Test func badPayloadsAreCountedAndTheServiceKeepsRunning() throws {
        let mqtt = try AggregatorTestServices.requireMQTT()
        let db = try PostgresTestDatabase("aggregator_reject")
        defer { db.drop() }
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(try db.connect())
        let siteID = "rej-\(UInt32.random(in: 0...UInt32.max))"
        let sitePath = try aggregatorTempFile("site.yaml", AggregatorTestVenue.yaml(site: siteID, count: 3))
        let site = try SiteLoader.load(path: sitePath).site
        var config = AggregatorTestRun.config(site: sitePath, mqtt: mqtt, database: db.url, clientID: "agg-\(siteID)")
        config.maxPayloadBytes = 2048
        let run = AggregatorTestRun(config: config, site: site)
        #expect(run.waitUntilReady())
        let fleet = try AggregatorTestFleet(url: mqtt, topics: Topics(site: siteID), name: "fleet-rej")
        defer { fleet.close() }
        let t = Date().timeIntervalSince1970 - 60
        let good = SightingBatch(gateway: "gw-1", boot: "b", seq: 1, start: t, end: t + 1, sightings: [
            .init(device: AggregatorTestVenue.device(1), count: 1, rssiMax: -60, rssiMean: -60, rssiLast: -60, tx: -59, first: t + 0.5, last: t + 0.5)])
        let encoded = Array(try JSONEncoder().encode(good))
        try fleet.publishRaw(gateway: "gw-2", payload: encoded)                           // gateway mismatch
        try fleet.publishRaw(gateway: "gw-77", payload: encoded)                          // unknown gateway
        try fleet.publishRaw(gateway: "gw-1", payload: Array("{\"v\":1,\"gateway\":".utf8))  // malformed
        try fleet.publishRaw(gateway: "gw-1", payload: Array(repeating: 0x20, count: 4096))   // oversize
        try fleet.publish(good)
        #expect(try fleet.waitUntilAllAcked(timeout: 30))
        #expect(run.stop())
        let conn = try db.connect()
        let reasons = try conn.query("""
            SELECT gateway_id || ':' || reason || ':' || count FROM gateway_rejections WHERE site_id = $1 ORDER BY 1
            """, [siteID]).rows.map { try $0.string(0) }
        #expect(reasons == ["gw-1:malformed:1", "gw-1:oversize:1", "gw-2:gateway_mismatch:1", "gw-77:unknown_gateway:1"])
        #expect(try conn.query("SELECT sum(sightings)::int FROM gateway_ingest_hourly WHERE site_id = $1", [siteID]).first?.int(0) == 1)
        let text = String(decoding: run.service.metricsText(), as: UTF8.self)
        for reason in ["gateway_mismatch", "unknown_gateway", "malformed", "oversize"] {
            #expect(text.contains("waymark_aggregator_rejected_total{reason=\"\(reason)\"} 1"), "metric for \(reason)")
        }
    }

    @Test func theRetainedMonitoredSetFollowsTheDeviceAndStaysWithinItsSize() throws {
        let mqtt = try AggregatorTestServices.requireMQTT()
        let db = try PostgresTestDatabase("aggregator_monitored")
        defer { db.drop() }
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(try db.connect())
        let siteID = "mon-\(UInt32.random(in: 0...UInt32.max))"
        let regions = 8
        let sitePath = try aggregatorTempFile("site.yaml", AggregatorTestVenue.yaml(site: siteID, count: regions, monitored: 3))
        let site = try SiteLoader.load(path: sitePath).site
        let topics = Topics(site: siteID)
        let device = AggregatorTestVenue.device(0)

        // A phone app's view: the retained monitored set, as received.
        let watcher = try AggregatorMonitoredWatcher(url: mqtt, topic: topics.deviceMonitored(device))
        defer { watcher.close() }
        let run = AggregatorTestRun(config: AggregatorTestRun.config(site: sitePath, mqtt: mqtt, database: db.url, clientID: "agg-\(siteID)"),
                                    site: site)
        #expect(run.waitUntilReady())
        let fleet = try AggregatorTestFleet(url: mqtt, topics: topics, name: "fleet-mon")
        defer { fleet.close() }
        let records = AggregatorTestVenue.records(devices: 1, path: Array(0..<regions), dwell: 45,
                                                  start: Date().timeIntervalSince1970 - 3600, regions: regions)
        // The aggregator publishes the latest set per device per publish interval (a retained
        // topic wants the current value, not every intermediate one), so the walk is fed one
        // region at a time: each region's set must reach the watcher before the next is sent.
        let batches = AggregatorTestVenue.batches(records, boot: "b")
        let perRegion = Dictionary(grouping: batches) { b in
            Int(((b.start - records[0].t) / 45).rounded(.down)).clamped(to: 0...(regions - 1))
        }
        for region in 0..<regions {
            for b in perRegion[region] ?? [] { try fleet.publish(b) }
            #expect(try fleet.waitUntilAllAcked(timeout: 60))
            let deadline = Date().addingTimeInterval(20)
            while watcher.sets.last?.first != "r\(region)" && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            #expect(watcher.sets.last?.first == "r\(region)", "after region \(region): \(watcher.sets)")
        }
        #expect(run.stop())
        Thread.sleep(forTimeInterval: 0.3)
        let sets = watcher.sets
        #expect(sets.allSatisfy { $0.count >= 1 && $0.count <= 3 }, "\(sets)")
        #expect(sets.first?.first == "r0")
        #expect(sets.last?.first == "r7")
        // The set rotates with the device: each region leads the set in walk order.
        let leaders = sets.compactMap(\.first).reduce(into: [String]()) { if $0.last != $1 { $0.append($1) } }
        #expect(leaders == (0..<regions).map { "r\($0)" }, "\(sets)")
        #expect(sets.last == ["r7", "r6", "r5"])
        // A new subscriber gets the latest set, retained.
        let late = try AggregatorMonitoredWatcher(url: mqtt, topic: topics.deviceMonitored(device))
        defer { late.close() }
        let deadline = Date().addingTimeInterval(5)
        while late.sets.isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(late.sets.last == sets.last)
        #expect(late.identities.last?.first?.lowercased() == "\(AggregatorTestVenue.uuid.lowercased()):1:7")
    }
}

private extension Int {
    func clamped(to range: ClosedRange<Int>) -> Int { Swift.min(Swift.max(self, range.lowerBound), range.upperBound) }
}
