import Foundation
import Testing
@testable import WaymarkAggregator
import WaymarkConfig
import WaymarkCore
import WaymarkMQTT
import WaymarkPostgres

/// Issue 20, without services: every case of the hostile family gets its rejection from the
/// aggregator's core, retained or not, and leaves nothing to store but the rejection count.
@Suite struct HostileFamilyCoreTests {
    @Test func everyCaseIsRejectedWithItsReasonAndLeavesNoRows() throws {
        let t = 1_700_000_000.0
        let device = AggregatorTestVenue.device(1)
        let count = HostileFamily.cases(gateway: "gw-1", boot: "x", seq: 1, t: t, device: device).count
        let site = try SiteLoader.parse(yaml: AggregatorTestVenue.yaml(site: "hostile", count: count + 1)).site
        var settings = AggregatorCore.Settings(clock: .recorded)
        settings.rawSightings = true
        let topics = Topics(site: "hostile")
        var core = AggregatorCore(site: site, topics: topics, settings: settings)
        var expected: [RejectReason: Int] = [:]
        for retained in [true, false] {
            for i in 0..<count {
                let gw = "gw-\(i + 1)"
                let c = HostileFamily.cases(gateway: gw, boot: retained ? "ret" : "live", seq: 1, t: t, device: device)[i]
                let topic = c.kind == .status ? topics.status(gw) : topics.sightings(gw)
                let outcome = core.handle(topic: topic, payload: c.payload, receivedAt: t + 1, retained: retained)
                #expect(outcome == .rejected(c.expected, gateway: gw), "\(c.name) (retained: \(retained))")
                expected[c.expected, default: 0] += 1
            }
        }
        let sealed = core.sealWrite()
        let write = try #require(sealed)
        #expect(write.statuses.isEmpty && write.rawSightings.isEmpty && write.rawSources.isEmpty && write.devices.isEmpty)
        #expect(write.sightingCount == 0)
        var stored: [RejectReason: Int] = [:]
        for (key, n) in write.rejections { stored[key.reason, default: 0] += n }
        #expect(stored == expected)
        #expect(core.counts.byReason == expected)
        // The family covers every reason a field can earn, and the five payloads of the issue.
        #expect(Set(expected.keys).isSuperset(of: [.outOfRange, .badText, .badEnum, .malformed, .badTimes, .clockAbsurd, .gatewayMismatch, .version]))
        let names = Set(HostileFamily.cases(gateway: "gw-1", boot: "x", seq: 1, t: t, device: device).map(\.name))
        for name in ["status t=1e20", "status spool_depth=3e9", "status version=escaped-NUL", "batch sightings[0].rssi_max=1e300",
                     "batch boot=invalid-utf8-0"] {
            #expect(names.contains(name), "\(name) is in the family")
        }
    }
}

/// Issue 20 against the real broker and database: no input stops the aggregator.
@Suite("Hostile input", .enabled(if: AggregatorTestServices.shouldRun), .serialized)
struct HostileInputTests {
    static func arguments(site: String, mqtt: String, database: String, clientID: String) -> [String] {
        ["--site", site, "--broker", mqtt, "--database", database, "--metrics-port", "0",
         "--set", "mqtt.client_id=\(clientID)", "--set", "database.flush_interval_ms=100", "--set", "database.retry_s=0.2",
         "--set", "clock.tolerance_s=1000000000", "--set", "clock.max_age_s=10000000000",
         "--set", "raw_sightings.enabled=true", "--set", "ingest.gap_timeout_s=30", "--set", "log.level=warning"]
    }

    static func good(_ gateway: String, boot: String = "good", seq: UInt64, t: Double) -> SightingBatch {
        SightingBatch(gateway: gateway, boot: boot, seq: seq, start: t - 1, end: t, sightings: [
            .init(device: AggregatorTestVenue.device(1), count: 1, rssiMax: -60, rssiMean: -60, rssiLast: -60, tx: -59, first: t - 0.5, last: t - 0.5)])
    }

    static func publisher(_ mqtt: String) throws -> MQTTClient {
        let client = try MQTTClient(.init(clientID: "hostile-\(UInt32.random(in: 0...UInt32.max))", maxInflight: 500, maxQueued: 0))
        try client.connect(try MQTTConnection(url: mqtt))
        try client.waitUntilConnected(timeout: 10)
        return client
    }

    static func waitForPublishes(_ client: MQTTClient) {
        let deadline = Date().addingTimeInterval(20)
        while client.unacknowledgedCount > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
    }

    /// The whole family, retained (on the broker before the aggregator starts, and again at a
    /// restart) and live, one gateway per case, with good traffic before, between and after.
    @Test func theHostileFamilyNeverStopsTheAggregator() throws {
        let started = Date()
        let mqtt = try AggregatorTestServices.requireMQTT()
        let db = try PostgresTestDatabase("hostile")
        defer { db.drop() }
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(try db.connect())
        let siteID = "hostile-\(UInt32.random(in: 0...UInt32.max))"
        let topics = Topics(site: siteID)
        let device = AggregatorTestVenue.device(1)
        var t = Date().timeIntervalSince1970 - 60
        let n = HostileFamily.cases(gateway: "gw-1", boot: "x", seq: 1, t: t, device: device).count
        let sitePath = try aggregatorTempFile("site.yaml", AggregatorTestVenue.yaml(site: siteID, count: n + 1))
        let log = sitePath + ".log"
        func caseAt(_ i: Int, boot: String) -> (topic: String, c: HostileCase) {
            let gw = "gw-\(i + 1)"
            let c = HostileFamily.cases(gateway: gw, boot: boot, seq: 1, t: t, device: device)[i]
            return (c.kind == .status ? topics.status(gw) : topics.sightings(gw), c)
        }

        // Poison on the broker before the aggregator starts: every case retained on its gateway.
        let poisoner = try Self.publisher(mqtt)
        defer { poisoner.close() }
        var retainedTopics: [String] = []
        for i in 0..<n {
            let (topic, c) = caseAt(i, boot: "ret")
            try poisoner.publish(topic: topic, payload: c.payload, qos: 1, retain: true)
            retainedTopics.append(topic)
        }
        Self.waitForPublishes(poisoner)
        defer {
            for topic in retainedTopics { _ = try? poisoner.publish(topic: topic, payload: [], qos: 1, retain: true) }
            Self.waitForPublishes(poisoner)
        }

        let arguments = Self.arguments(site: sitePath, mqtt: mqtt, database: db.url, clientID: "agg-\(siteID)")
        var process = try AggregatorProcesses.launchAggregator(arguments, log: log)
        defer { if process.isRunning { process.signal(SIGKILL); process.wait() } }
        let fleet = try AggregatorTestFleet(url: mqtt, topics: topics, name: "fleet-hostile")
        defer { fleet.close() }

        // Good traffic before (the resend covers the aggregator's start).
        try fleet.publish(Self.good("gw-0", seq: 1, t: t))
        #expect(try fleet.waitUntilAllAcked(timeout: 30, resendEvery: 0.5))
        #expect(process.isRunning, "alive after the retained poison")
        let goodStatus = HostileFamily.object(HostileFamily.status(gateway: "gw-0", t: t))
        try fleet.client.publish(topic: topics.status("gw-0"), payload: goodStatus, qos: 1)

        // The family, live.
        t += 1
        for i in 0..<n {
            let (topic, c) = caseAt(i, boot: "live")
            try fleet.client.publish(topic: topic, payload: c.payload, qos: 1)
        }
        // Good traffic after, on every gateway (a bad message must not block its gateway's stream).
        t += 1
        try fleet.publish(Self.good("gw-0", seq: 2, t: t))
        for i in 0..<n { try fleet.publish(Self.good("gw-\(i + 1)", seq: 1, t: t)) }
        try fleet.client.publish(topic: topics.status("gw-0"), payload: HostileFamily.object(HostileFamily.status(gateway: "gw-0", t: t)), qos: 1)
        #expect(try fleet.waitUntilAllAcked(timeout: 60, resendEvery: 5))
        #expect(process.isRunning, "alive after the live family")
        process.signal(SIGTERM)
        #expect(process.wait() == 0, "a SIGTERM stop exits 0")

        // A restart with the retained poison still on the broker: it starts and stays up.
        process = try AggregatorProcesses.launchAggregator(arguments, log: log)
        t += 1
        try fleet.publish(Self.good("gw-0", seq: 3, t: t))
        #expect(try fleet.waitUntilAllAcked(timeout: 30, resendEvery: 0.5))
        Thread.sleep(forTimeInterval: 0.5)
        #expect(process.isRunning, "alive after a restart with the retained poison")
        process.signal(SIGTERM)
        #expect(process.wait() == 0)

        let conn = try db.connect()
        // Every rejection counted where it belongs: retained (twice, unless its sequence number
        // was taken and acked the first time) and live.
        var expected: [String: Int] = [:]
        for i in 0..<n {
            let c = caseAt(i, boot: "x").c
            expected["gw-\(i + 1):\(c.expected.rawValue)"] = c.settlesSequence ? 2 : 3
        }
        var counted: [String: Int] = [:]
        for row in try conn.query("""
            SELECT gateway_id || ':' || reason, sum(count)::bigint FROM gateway_rejections WHERE site_id = $1 GROUP BY 1
            """, [siteID]).rows {
            counted[try row.string(0)] = try row.int(1)
        }
        #expect(counted == expected)
        // Nothing of the bad messages stored: the statuses are exactly the two good ones, the raw
        // sightings exactly the good batches, each once.
        let statuses = try conn.query("SELECT gateway_id, version, spool_depth FROM gateway_status WHERE site_id = $1", [siteID]).rows
        #expect(statuses.count == 2)
        #expect(try statuses.allSatisfy { try $0.string(0) == "gw-0" && $0.string(1) == "1.4.2" && $0.int(2) == 3 })
        let raw = try conn.query("""
            SELECT gateway_id || '/' || boot || '/' || seq, count(*)::int FROM sightings WHERE site_id = $1 GROUP BY 1 ORDER BY 1
            """, [siteID]).rows.map { (try $0.string(0), try $0.int(1)) }
        let expectedRaw = (["gw-0/good/1", "gw-0/good/2", "gw-0/good/3"] + (1...n).map { "gw-\($0)/good/1" }).sorted()
        #expect(raw.map(\.0) == expectedRaw)
        #expect(raw.allSatisfy { $0.1 == 1 }, "each good batch once")
        #expect(try conn.query("SELECT sum(batches)::int FROM gateway_ingest_hourly WHERE site_id = $1", [siteID]).first?.int(0) == n + 3)
        #expect(try conn.query("SELECT count(*)::int FROM quarantine WHERE site_id = $1", [siteID]).first?.int(0) == 0)
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(!text.contains("giving up") && !text.contains("critical"), "no fatal log lines")
        print("hostile family: \(n) cases × (retained, live, retained again) + \(n + 3) good batches in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    /// What passes every check but PostgreSQL still refuses (here: CHECK constraints the test adds)
    /// is quarantined with its payload, acked, and the rest of the write commits.
    @Test func aRefusedMessageIsQuarantinedAndAcked() throws {
        let mqtt = try AggregatorTestServices.requireMQTT()
        let db = try PostgresTestDatabase("quarantine")
        defer { db.drop() }
        let conn = try db.connect()
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(conn)
        try conn.execute("ALTER TABLE gateway_status ADD CONSTRAINT test_poison CHECK (version IS DISTINCT FROM 'poison')")
        try conn.execute("ALTER TABLE sightings ADD CONSTRAINT test_poison CHECK (rssi_max <> -99)")
        let siteID = "quar-\(UInt32.random(in: 0...UInt32.max))"
        let topics = Topics(site: siteID)
        let sitePath = try aggregatorTempFile("site.yaml", AggregatorTestVenue.yaml(site: siteID, count: 3))
        let process = try AggregatorProcesses.launchAggregator(
            Self.arguments(site: sitePath, mqtt: mqtt, database: db.url, clientID: "agg-\(siteID)"), log: sitePath + ".log")
        defer { if process.isRunning { process.signal(SIGKILL); process.wait() } }
        let fleet = try AggregatorTestFleet(url: mqtt, topics: topics, name: "fleet-quar")
        defer { fleet.close() }
        let t = Date().timeIntervalSince1970 - 60
        try fleet.publish(Self.good("gw-0", seq: 1, t: t))
        #expect(try fleet.waitUntilAllAcked(timeout: 30, resendEvery: 0.5))

        let status = Array(#"{"state":"online","gateway":"gw-1","version":"poison","boot":"b","t":\#(t)}"#.utf8)
        try fleet.client.publish(topic: topics.status("gw-1"), payload: status, qos: 1)
        var poison = Self.good("gw-1", boot: "p", seq: 1, t: t + 1)
        poison.sightings[0].rssiMax = -99
        let poisonPayload = Array(try JSONEncoder().encode(poison))
        try fleet.publish(poison, payload: poisonPayload)
        try fleet.publish(Self.good("gw-0", seq: 2, t: t + 2))
        try fleet.publish(Self.good("gw-2", seq: 1, t: t + 2))
        #expect(try fleet.waitUntilAllAcked(timeout: 30), "the quarantined batch is acked too")
        #expect(process.isRunning)
        process.signal(SIGTERM)
        #expect(process.wait() == 0)

        let rows = try conn.query("""
            SELECT gateway_id, kind, payload, sqlstate, error FROM quarantine WHERE site_id = $1 ORDER BY kind
            """, [siteID]).rows
        #expect(rows.count == 2)
        if rows.count == 2 {
            #expect(try rows[0].string(0) == "gw-1" && rows[0].string(1) == "sightings" && rows[0].string(3) == "23514")
            let stored = try rows[0].decode(PostgresBytes.self, 2).bytes
            #expect(stored == poisonPayload, "\(String(decoding: stored, as: UTF8.self))")
            #expect(try rows[1].string(0) == "gw-1" && rows[1].string(1) == "status" && rows[1].string(3) == "23514")
            #expect(try rows[1].decode(PostgresBytes.self, 2).bytes == status)
            #expect(try rows[1].string(4).contains("test_poison"))
        }
        #expect(try conn.query("SELECT count(*)::int FROM gateway_status WHERE site_id = $1", [siteID]).first?.int(0) == 0)
        let raw = try conn.query("SELECT gateway_id || '/' || seq FROM sightings WHERE site_id = $1 ORDER BY 1", [siteID]).rows.map { try $0.string(0) }
        #expect(raw == ["gw-0/1", "gw-0/2", "gw-2/1"])
        #expect(try conn.query("""
            SELECT sum(count)::int FROM gateway_rejections WHERE site_id = $1 AND gateway_id = 'gw-1' AND reason = 'quarantined'
            """, [siteID]).first?.int(0) == 2)
        #expect(try conn.query("SELECT seq::int FROM gateway_progress WHERE site_id = $1 AND gateway_id = 'gw-1'", [siteID]).first?.int(0) == 1)
    }

    /// A write failure that is neither the connection nor one message's data (here: a table
    /// renamed away under the running aggregator) stops it with exit status 1, so a supervisor sees it.
    @Test func aWriteErrorRetryingCannotFixExitsNonZero() throws {
        let mqtt = try AggregatorTestServices.requireMQTT()
        let db = try PostgresTestDatabase("fatal")
        defer { db.drop() }
        let conn = try db.connect()
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(conn)
        let siteID = "fatal-\(UInt32.random(in: 0...UInt32.max))"
        let sitePath = try aggregatorTempFile("site.yaml", AggregatorTestVenue.yaml(site: siteID, count: 2))
        let log = sitePath + ".log"
        let process = try AggregatorProcesses.launchAggregator(
            Self.arguments(site: sitePath, mqtt: mqtt, database: db.url, clientID: "agg-\(siteID)"), log: log)
        defer { if process.isRunning { process.signal(SIGKILL); process.wait() } }
        let fleet = try AggregatorTestFleet(url: mqtt, topics: Topics(site: siteID), name: "fleet-fatal")
        defer { fleet.close() }
        let t = Date().timeIntervalSince1970 - 60
        try fleet.publish(Self.good("gw-0", seq: 1, t: t))
        #expect(try fleet.waitUntilAllAcked(timeout: 30, resendEvery: 0.5))
        try conn.execute("ALTER TABLE aggregator_state RENAME TO aggregator_state_moved")
        try fleet.publish(Self.good("gw-0", seq: 2, t: t + 1))
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(!process.isRunning, "stopped by itself")
        #expect(process.wait() == 1)
        #expect(fleet.acks["gw-0"]?.seq == 1, "the failed write is not acked")
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(text.contains("retrying cannot fix"), "log: \(text.suffix(2000))")
    }

    /// The issue's failures at the store itself (bypassing the ingest checks): a status with a time
    /// and a spool depth PostgreSQL refuses, raw sightings with RSSI 1e300, an event at year 10¹²:
    /// the plain write fails with a data error, the careful one quarantines each and commits the rest.
    @Test func aCarefulWriteSetsAsideWhatPostgreSQLRefusesAndCommitsTheRest() throws {
        let db = try PostgresTestDatabase("careful")
        defer { db.drop() }
        let conn = try db.connect()
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(conn)
        let siteID = "careful-\(UInt32.random(in: 0...UInt32.max))"
        let site = try SiteLoader.parse(yaml: AggregatorTestVenue.yaml(site: siteID, count: 3)).site
        let store = AggregatorStore(siteID: siteID)
        try store.syncSite(conn, site)
        let t = 1_700_000_000.0
        var batch = WriteBatch()
        let good = GatewayStatus(state: .online, gateway: "gw-0", version: "1", boot: "b", spoolDepth: 1, t: t)
        let badTime = GatewayStatus(state: .online, gateway: "gw-1", version: "1", boot: "b", t: 1e20)
        let badDepth = GatewayStatus(state: .online, gateway: "gw-2", version: "1", boot: "b", spoolDepth: 3_000_000_000, t: t)
        for (s, payload) in [(good, "good"), (badTime, "t=1e20"), (badDepth, "spool_depth=3e9")] {
            batch.statuses.append(.init(gateway: s.gateway, receivedAt: t, status: s, payload: Array(payload.utf8)))
        }
        let device = AggregatorTestVenue.device(1)
        func entry(_ rssi: Double) -> SightingBatch.Entry {
            .init(device: device, count: 1, rssiMax: rssi, rssiMean: -60, rssiLast: -60, tx: nil, first: t, last: t)
        }
        batch.rawSightings = [.init(gateway: "gw-0", boot: "b", seq: 1, entry: entry(-60)), .init(gateway: "gw-1", boot: "b", seq: 1, entry: entry(1e300))]
        batch.rawSources = [.init(gateway: "gw-0", boot: "b", seq: 1, receivedAt: t, payload: Array("batch-good".utf8)),
                            .init(gateway: "gw-1", boot: "b", seq: 1, receivedAt: t, payload: Array("batch-1e300".utf8))]
        batch.events = [.init(device: device, t: t, kind: "enter", region: "r0", proximity: "near", distanceM: 1),
                        .init(device: device, t: 1e12 * 31_557_600, kind: "exit", region: "r0", proximity: nil, distanceM: nil)]
        batch.devices[device] = (t, t)
        batch.progress = [.init(gateway: "gw-0", boot: "b"): 1, .init(gateway: "gw-1", boot: "b"): 1]

        let plain = #expect(throws: PostgresError.self) { try store.write(conn, batch) }
        #expect(plain?.isDataError == true, "\(String(describing: plain))")
        #expect(try conn.query("SELECT count(*)::int FROM gateway_progress WHERE site_id = $1", [siteID]).first?.int(0) == 0)

        let quarantined = try store.write(conn, batch, careful: true)
        #expect(Set(quarantined.map { "\($0.gateway ?? "-")/\($0.kind)/\(String(decoding: $0.payload ?? [], as: UTF8.self))" })
                == ["-/rows:region_events/", "gw-1/status/t=1e20", "gw-2/status/spool_depth=3e9", "gw-1/sightings/batch-1e300"])
        #expect(quarantined.allSatisfy { $0.sqlState.hasPrefix("22") })
        #expect(try conn.query("SELECT count(*)::int FROM quarantine WHERE site_id = $1", [siteID]).first?.int(0) == 4)
        // The rest committed: the good status, the good raw sighting, the device, both marks.
        #expect(try conn.query("SELECT string_agg(gateway_id, ',') FROM gateway_status WHERE site_id = $1", [siteID]).first?.string(0) == "gw-0")
        #expect(try conn.query("SELECT string_agg(gateway_id, ',') FROM sightings WHERE site_id = $1", [siteID]).first?.string(0) == "gw-0")
        #expect(try conn.query("SELECT count(*)::int FROM devices WHERE site_id = $1", [siteID]).first?.int(0) == 1)
        #expect(try conn.query("SELECT count(*)::int FROM gateway_progress WHERE site_id = $1", [siteID]).first?.int(0) == 2)
        let counted = try conn.query("""
            SELECT string_agg(gateway_id || ':' || count, ',' ORDER BY gateway_id) FROM gateway_rejections WHERE site_id = $1 AND reason = 'quarantined'
            """, [siteID]).first?.string(0)
        #expect(counted == "gw-1:2,gw-2:1")
    }
}
