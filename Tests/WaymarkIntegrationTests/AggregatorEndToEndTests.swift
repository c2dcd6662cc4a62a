import Foundation
import Testing
import WaymarkAggregator
import WaymarkConfig
import WaymarkCore
import WaymarkFusion
import WaymarkPostgres

@Suite("Aggregator end to end (Mosquitto + PostgreSQL)", .enabled(if: AggregatorTestServices.shouldRun), .serialized)
struct AggregatorEndToEndTests {
    /// Sightings published as gateways end up as visits and journeys equal to what the fusion
    /// engines produce for the same batches in the same order (the `waymark replay --batches
    /// --workers N` procedure), with one fusion worker and with two (`fusion.workers`).
    @Test(arguments: [1, 2]) func visitsAndJourneysMatchTheEngine(workers: Int) throws {
        let mqtt = try AggregatorTestServices.requireMQTT()
        let db = try PostgresTestDatabase("aggregator_e2e")
        defer { db.drop() }
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(try db.connect())
        let siteID = "e2e-\(UInt32.random(in: 0...UInt32.max))"
        let regions = 6
        let sitePath = try aggregatorTempFile("site.yaml", AggregatorTestVenue.yaml(site: siteID, count: regions))
        let site = try SiteLoader.load(path: sitePath).site
        let start = Date().timeIntervalSince1970 - 3600
        let records = AggregatorTestVenue.records(devices: 4, path: [0, 1, 2, 3, 4, 5, 4, 2], dwell: 40, start: start, regions: regions)
        let batches = AggregatorTestVenue.batches(records, boot: "boot-a")
        let end = records.last!.t + 700
        let heartbeats = AggregatorTestVenue.heartbeats(after: batches, gateways: regions, at: end, boot: "boot-a")

        var config = AggregatorTestRun.config(site: sitePath, mqtt: mqtt, database: db.url, clientID: "agg-\(siteID)")
        config.fusionWorkers = workers
        let run = AggregatorTestRun(config: config, site: site)
        #expect(run.waitUntilReady())
        let fleet = try AggregatorTestFleet(url: mqtt, topics: Topics(site: siteID), name: "fleet-e2e")
        defer { fleet.close() }
        for b in batches + heartbeats { try fleet.publish(b) }
        #expect(try fleet.waitUntilAllAcked(timeout: 90))
        #expect(run.stop())
        #expect(run.error == nil)

        // The same batches through the engines, as `waymark replay --batches --workers N` feeds them
        // (the batches are in window order, the order the aggregator fuses them in).
        var engine = FusionWorkers(site: site, count: workers)
        var out: [FusionOutput] = []
        var handles: [DeviceHandle] = []
        for b in batches + heartbeats { engine.feed(b, gateway: site.gatewayIndex(b.gateway)!, into: &out, handles: &handles) }
        func us(_ t: Double) -> Int64 { Int64((t * 1_000_000).rounded(.down)) }
        let expectedVisits = out.compactMap { o -> String? in
            guard case .visit(let v) = o else { return nil }
            return "\(v.device) \(v.region) \(us(v.entered)) \(us(v.exited)) \(v.inferred)"
        }.sorted()
        let expectedJourneys = out.compactMap { o -> String? in
            guard case .journey(let j) = o else { return nil }
            return "\(j.device) \(us(j.started)) \(us(j.ended)) \(j.regions.joined(separator: ","))"
        }.sorted()

        let conn = try db.connect()
        let visits = try conn.query("""
            SELECT device_id, region_id, (extract(epoch FROM entered_at) * 1000000)::bigint, (extract(epoch FROM exited_at) * 1000000)::bigint, inferred
            FROM visits WHERE site_id = $1
            """, [siteID]).rows.map { "\(try $0.string(0)) \(try $0.string(1)) \(try $0.int(2)) \(try $0.int(3)) \(try $0.bool(4))" }.sorted()
        let journeys = try conn.query("""
            SELECT device_id, (extract(epoch FROM started_at) * 1000000)::bigint, (extract(epoch FROM ended_at) * 1000000)::bigint, array_to_string(regions, ',')
            FROM journeys WHERE site_id = $1
            """, [siteID]).rows.map { "\(try $0.string(0)) \(try $0.int(1)) \(try $0.int(2)) \(try $0.string(3))" }.sorted()
        #expect(!expectedVisits.isEmpty && !expectedJourneys.isEmpty)
        // timestamptz keeps microseconds: allow one microsecond of rounding on each time.
        #expect(Self.matches(visits, expectedVisits), "stored \(visits)\nexpected \(expectedVisits)")
        #expect(Self.matches(journeys, expectedJourneys), "stored \(journeys)\nexpected \(expectedJourneys)")
        // Each device's current-region history, read back in (at, seq) order, is the engine's
        // sequence of location changes — also where two changes share a time.
        var expectedHistory: [String: [String]] = [:]
        for case .location(let l) in out { expectedHistory[l.device.rawValue, default: []].append(l.region ?? "-") }
        var history: [String: [String]] = [:]
        for row in try conn.query("""
            SELECT device_id, coalesce(region_id, '-') FROM region_events
            WHERE site_id = $1 AND kind = 'region_change' ORDER BY device_id, at, seq
            """, [siteID]).rows {
            history[try row.string(0), default: []].append(try row.string(1))
        }
        #expect(!expectedHistory.isEmpty)
        #expect(history == expectedHistory)
        // Every visit of a finished journey points at it.
        #expect(try conn.query("SELECT count(*) FROM visits WHERE site_id = $1 AND journey_id IS NULL", [siteID]).first?.int(0) == 0)
        // Ingest bookkeeping: every sighting counted once, marks at the last batch, devices known.
        let counted = try conn.query("SELECT sum(sightings)::bigint, sum(batches)::bigint FROM gateway_ingest_hourly WHERE site_id = $1", [siteID]).first
        #expect(try counted?.int(0) == records.count)
        #expect(try counted?.int(1) == batches.count + heartbeats.count)
        #expect(try conn.query("SELECT count(*) FROM devices WHERE site_id = $1", [siteID]).first?.int(0) == 4)
        #expect(try conn.query("SELECT count(*) FROM device_state WHERE site_id = $1", [siteID]).first?.int(0) == 4)
        #expect(try conn.query("SELECT count(*) FROM entrance_heard WHERE site_id = $1 AND region_id = 'r0'", [siteID]).first?.int(0) ?? 0 >= 4)
        let marks = try conn.query("SELECT gateway_id, seq FROM gateway_progress WHERE site_id = $1 AND boot = 'boot-a'", [siteID]).rows
        #expect(marks.count == regions)
        for row in marks {
            let gw = try row.string(0)
            #expect(try row.int(1) == Int(heartbeats.first { $0.gateway == gw }!.seq))
        }
    }

    /// Equal lists of "text µs µs text…" rows, numbers allowed to differ by 1 µs.
    static func matches(_ a: [String], _ b: [String]) -> Bool {
        guard a.count == b.count else { return false }
        for (x, y) in zip(a, b) {
            let fx = x.split(separator: " "), fy = y.split(separator: " ")
            guard fx.count == fy.count else { return false }
            for (u, v) in zip(fx, fy) where u != v {
                guard let m = Int64(u), let n = Int64(v), abs(m - n) <= 1 else { return false }
            }
        }
        return true
    }
}
