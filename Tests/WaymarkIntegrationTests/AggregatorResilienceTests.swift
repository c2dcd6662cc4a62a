import Foundation
import Testing
import WaymarkAggregator
import WaymarkConfig
import WaymarkCore
import WaymarkPostgres

@Suite("Aggregator crashes and database outages", .enabled(if: AggregatorTestServices.shouldRun), .serialized)
struct AggregatorResilienceTests {
    /// Checks that the database holds every sighting of `records` exactly once.
    static func expectExactlyOnce(_ conn: PostgresConnection, site: String, records: Int, batches: Int) throws {
        let raw = try conn.query("""
            SELECT count(*), count(DISTINCT (gateway_id, boot, seq, device_id, first_at)) FROM sightings WHERE site_id = $1
            """, [site]).first
        #expect(try raw?.int(0) == records, "raw sighting rows")
        #expect(try raw?.int(1) == records, "distinct raw sightings")
        let counted = try conn.query("SELECT sum(sightings)::bigint, sum(batches)::bigint FROM gateway_ingest_hourly WHERE site_id = $1", [site]).first
        #expect(try counted?.int(0) == records, "sightings counted in gateway_ingest_hourly")
        #expect(try counted?.int(1) == batches, "batches counted in gateway_ingest_hourly")
    }

    @Test func sigkillMidStreamLosesAndDuplicatesNothing() throws {
        let mqtt = try AggregatorTestServices.requireMQTT()
        let db = try PostgresTestDatabase("aggregator_kill")
        defer { db.drop() }
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(try db.connect())
        let siteID = "kill-\(UInt32.random(in: 0...UInt32.max))"
        let regions = 6
        let sitePath = try aggregatorTempFile("site.yaml", AggregatorTestVenue.yaml(site: siteID, count: regions))
        let log = sitePath + ".log"
        let records = AggregatorTestVenue.records(devices: 12, path: [0, 1, 2, 3, 4, 5, 4, 3], dwell: 30,
                                                  start: Date().timeIntervalSince1970 - 3600, regions: regions)
        let batches = AggregatorTestVenue.batches(records, boot: "boot-k")
        let arguments = ["--site", sitePath, "--broker", mqtt, "--database", db.url, "--metrics-port", "0",
                         "--set", "mqtt.client_id=agg-\(siteID)", "--set", "database.flush_interval_ms=100",
                         "--set", "clock.tolerance_s=1000000000", "--set", "clock.max_age_s=10000000000",
                         "--set", "raw_sightings.enabled=true", "--set", "ingest.gap_timeout_s=30", "--set", "log.level=warning"]
        var process = try AggregatorProcesses.launchAggregator(arguments, log: log)
        defer { if process.isRunning { process.signal(SIGKILL); process.wait() } }
        Thread.sleep(forTimeInterval: 1.5)
        let fleet = try AggregatorTestFleet(url: mqtt, topics: Topics(site: siteID), name: "fleet-kill")
        defer { fleet.close() }

        // Publish in four parts; SIGKILL the aggregator after each of the first three and restart it.
        let parts = 4
        var inFlightAtKill: [Int] = []
        let size = (batches.count + parts - 1) / parts
        for part in 0..<parts {
            for b in batches[(part * size)..<min(batches.count, (part + 1) * size)] { try fleet.publish(b) }
            if part < parts - 1 {
                Thread.sleep(forTimeInterval: 0.05)  // mid-stream: some committed, some in flight
                inFlightAtKill.append(fleet.unackedCount)
                process.signal(SIGKILL)
                #expect(process.wait() == 128 + SIGKILL)
                process = try AggregatorProcesses.launchAggregator(arguments, log: log)
            }
        }
        // The kills hit a stream with unacknowledged batches (not a quiet aggregator).
        #expect(inFlightAtKill.count == 3 && inFlightAtKill.allSatisfy { $0 > 0 }, "unacked at each kill: \(inFlightAtKill)")
        #expect(try fleet.waitUntilAllAcked(timeout: 120, resendEvery: 2))
        process.signal(SIGTERM)
        #expect(process.wait() == 0, "aggregator log: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        try Self.expectExactlyOnce(try db.connect(), site: siteID, records: records.count, batches: batches.count)
    }

    @Test func postgresStoppedAndRestartedMidStreamLosesAndDuplicatesNothing() throws {
        let mqtt = try AggregatorTestServices.requireMQTT()
        let cluster = try AggregatorPrivateCluster()
        defer { cluster.destroy() }
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(try PostgresConnection(url: cluster.url))
        let siteID = "outage-\(UInt32.random(in: 0...UInt32.max))"
        let regions = 5
        let sitePath = try aggregatorTempFile("site.yaml", AggregatorTestVenue.yaml(site: siteID, count: regions))
        let site = try SiteLoader.load(path: sitePath).site
        let records = AggregatorTestVenue.records(devices: 6, path: [0, 1, 2, 3, 4, 3], dwell: 30,
                                                  start: Date().timeIntervalSince1970 - 3600, regions: regions)
        let batches = AggregatorTestVenue.batches(records, boot: "boot-o")
        var config = AggregatorTestRun.config(site: sitePath, mqtt: mqtt, database: cluster.url, clientID: "agg-\(siteID)")
        config.rawSightings = true
        let run = AggregatorTestRun(config: config, site: site)
        #expect(run.waitUntilReady())
        let fleet = try AggregatorTestFleet(url: mqtt, topics: Topics(site: siteID), name: "fleet-outage")
        defer { fleet.close() }
        let third = batches.count / 3
        for b in batches[0..<third] { try fleet.publish(b) }
        #expect(try fleet.waitUntilAllAcked(timeout: 60))

        try cluster.stop()
        let acksBefore = fleet.ackMessages
        for b in batches[third..<(2 * third)] { try fleet.publish(b) }
        Thread.sleep(forTimeInterval: 2)
        // Fusion went on (the batches were taken: not re-requested), but nothing was acked.
        #expect(fleet.ackMessages == acksBefore)
        #expect(fleet.unackedCount == third)
        let metrics = String(decoding: run.service.metricsText(), as: UTF8.self)
        #expect(metrics.contains("waymark_aggregator_db_up 0"))

        try cluster.start()
        for b in batches[(2 * third)...] { try fleet.publish(b) }
        #expect(try fleet.waitUntilAllAcked(timeout: 90))
        #expect(run.stop())
        #expect(run.error == nil)
        try Self.expectExactlyOnce(try PostgresConnection(url: cluster.url), site: siteID, records: records.count, batches: batches.count)
    }
}
