import Foundation
import Testing
import WaymarkAggregator
import WaymarkPostgres
import WaymarkReports

/// The history tables partitioned by month (schema 0011) and their retention, with the report
/// rollups that must survive it (0114), against the real PostgreSQL.
@Suite("History partitions and retention against PostgreSQL", .enabled(if: PostgresTestServer.shouldRun))
struct HistoryPartitionTests {
    static let history = ["region_events", "visits", "transitions"]

    /// Every row of the history tables and of journeys, as sorted text (region events with seq).
    func rows(_ conn: PostgresConnection) throws -> [String: [String]] {
        try conn.execute("SET TimeZone = 'UTC'")
        var out: [String: [String]] = [:]
        for table in Self.history + ["journeys"] {
            out[table] = try conn.query("SELECT t::text FROM \(table) t ORDER BY t::text COLLATE \"C\"").rows.map { try $0.string(0) }
        }
        return out
    }

    /// Partition of each row of `table`, with how many rows it holds.
    func placement(_ conn: PostgresConnection, _ table: String) throws -> [String: Int] {
        var out: [String: Int] = [:]
        for row in try conn.query("SELECT tableoid::regclass::text, count(*) FROM \(table) GROUP BY 1").rows {
            out[try row.string(0)] = try row.int(1)
        }
        return out
    }

    /// Some region events per fixture visit (enter and exit), so that region_events has rows to move.
    func insertEvents(_ conn: PostgresConnection, _ site: String) throws {
        try conn.query("""
            INSERT INTO region_events (site_id, device_id, at, kind, region_id, proximity, distance_m)
            SELECT site_id, device_id, entered_at, 'enter', region_id, 'near', 2.5 FROM visits WHERE site_id = $1
            UNION ALL
            SELECT site_id, device_id, exited_at, 'exit', region_id, NULL, NULL FROM visits WHERE site_id = $1
            ORDER BY 3
            """, [site])
    }

    /// A database of the schema before 0011 (reports up to 0113 included) with the report fixture,
    /// region events and built rollups gets 0011 and 0114–0117: every row stays, in the month partitions,
    /// the report triggers and grants follow, and the rollups need no refresh.
    @Test func migrationConvertsAnOldDatabaseWithoutLosingARow() throws {
        let fixture = try ReportFixture()
        let db = try PostgresTestDatabase("historymigration")
        let conn = try db.connect()
        defer { conn.close(); db.drop() }
        let all = try PostgresMigrator(directory: repositorySchemaDirectory)
        try PostgresMigrator(migrations: all.migrations.filter { $0.version != 11 && $0.version < 114 }).migrate(conn)
        let site = fixture.site.id
        let runner = try ReportRunner(connection: conn)
        try fixture.insertSite(into: conn)
        try fixture.insertMovement(into: conn, devices: { _ in true })
        try insertEvents(conn, site)
        // A row far from the others: a month of its own.
        try conn.query("""
            INSERT INTO transitions (site_id, device_id, from_region, to_region, at) VALUES ($1, 'mac:aa', 'lobby', 'hall-a', '2031-02-03T04:05:06Z')
            """, [site])
        #expect(try runner.refresh() > 0)
        let before = try rows(conn)
        let maxSeq = try conn.query("SELECT max(seq) FROM region_events").first?.int(0) ?? 0
        let checks = ReportRefreshTests()
        // report_period_devices comes with 0115 (converted from report_period_members, which the
        // snapshot leaves out); ReportRefreshTests checks that conversion.
        let kept = Set(ReportRefreshTests.tables.map(\.name)).subtracting(["report_period_devices"])
        let rollups = try checks.snapshot(conn, site, only: kept)
        #expect(before["visits"]!.count > 500 && before["region_events"]!.count == 2 * before["visits"]!.count)

        let outcome = try all.migrate(conn)
        #expect(outcome.applied.map(\.version) == [11, 114, 115, 116, 117])
        #expect(try rows(conn) == before, "every row of region_events, visits, transitions and journeys is still there")
        for table in Self.history {
            #expect(try conn.query("SELECT relkind::text FROM pg_class WHERE oid = $1::regclass", [table]).first?.string(0) == "p")
            let parts = try placement(conn, table)
            #expect(parts[table + "_default"] == nil, "\(table): no row in the default partition: \(parts)")
            #expect(parts[table + "_202606"] ?? 0 > 0, "\(table): June 2026 rows in their month: \(parts)")
            #expect(try conn.query("SELECT to_regclass($1) IS NULL", [table + "_unpartitioned"]).first?.bool(0) == true)
            #expect(try conn.query("SELECT has_table_privilege('waymark_report', $1, 'SELECT')", [table]).first?.bool(0) == true)
        }
        #expect(try placement(conn, "transitions")["transitions_203102"] == 1)
        // The report triggers of 0100 moved to the partitioned tables; the conversion marked nothing.
        #expect(try conn.query("SELECT count(*) FROM pg_trigger WHERE tgrelid = 'visits'::regclass AND NOT tgisinternal").first?.int(0) == 4)
        #expect(try conn.query("SELECT count(*) FROM report_dirty_hours").first?.int(0) == 0)
        #expect(try conn.query("SELECT col_description('visits'::regclass, 4)").first?.string(0).contains("current occupant") == true)
        // The identity of region_events continues after the copied values.
        let next = try conn.query("""
            INSERT INTO region_events (site_id, device_id, at, kind, region_id) VALUES ($1, 'mac:bb', now(), 'enter', 'lobby') RETURNING seq
            """, [site]).first?.int(0) ?? 0
        #expect(next > maxSeq)
        // Writes as the aggregator does them still conflict on the keys.
        let again = try conn.query("""
            INSERT INTO visits SELECT * FROM visits WHERE site_id = $1 ORDER BY entered_at LIMIT 5 ON CONFLICT DO NOTHING
            """, [site])
        #expect(again.affectedRows == 0)
        // The rollups, rebuilt from the converted tables, are what they were.
        _ = try conn.query("SELECT waymark_report_rebuild($1)", [site])
        checks.expectSame(rollups, try checks.snapshot(conn, site, only: kept), "rollups before 0011 and rebuilt after it")
    }

    /// A row of a month without partition waits in the default partition; the upkeep that creates
    /// its month moves it there (with its seq), and a second upkeep changes nothing.
    @Test func upkeepMakesMonthsAheadAndMovesRowsOutOfTheDefault() throws {
        let db = try PostgresTestDatabase("historyupkeep")
        let conn = try db.connect()
        defer { conn.close(); db.drop() }
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(conn)
        try conn.query("INSERT INTO sites (site_id) VALUES ('s')")
        let store = AggregatorStore(siteID: "s")
        let now = Date(timeIntervalSince1970: 1_893_456_000)  // 2030-01-01T00:00:00Z
        try conn.query("""
            INSERT INTO region_events (site_id, device_id, at, kind, region_id) VALUES
                ('s', 'mac:01', '2030-01-20T10:00:00Z', 'enter', 'a'), ('s', 'mac:01', '2030-02-03T10:00:00Z', 'exit', 'a'),
                ('s', 'mac:01', '2030-06-01T00:00:00Z', 'enter', 'b')
            """)
        try conn.query("""
            INSERT INTO visits (site_id, device_id, region_id, entered_at, exited_at, dwell_s) VALUES
                ('s', 'mac:01', 'a', '2030-01-20T10:00:00Z', '2030-02-03T10:00:00Z', 1209600)
            """)
        #expect(try placement(conn, "region_events") == ["region_events_default": 3])
        #expect(try placement(conn, "visits") == ["visits_default": 1])
        let seqs = try conn.query("SELECT at::text || '/' || seq FROM region_events ORDER BY at").rows.map { try $0.string(0) }

        let first = try store.maintainHistory(conn, now: now, retentionDays: 0)
        // Yesterday's month (December 2029) to 40 days ahead (February 2030), for three tables.
        #expect(first.created == 9)
        #expect(first.keptFrom == nil && first.droppedPartitions == 0)
        #expect(try placement(conn, "region_events") == ["region_events_203001": 1, "region_events_203002": 1, "region_events_default": 1])
        #expect(try placement(conn, "visits") == ["visits_203001": 1])
        #expect(try conn.query("SELECT at::text || '/' || seq FROM region_events ORDER BY at").rows.map { try $0.string(0) } == seqs)
        #expect(try store.maintainHistory(conn, now: now, retentionDays: 0).created == 0)
        // The moved rows' partitions are like the others: indexed, with the keys enforced.
        let dup = try conn.query("""
            INSERT INTO region_events (site_id, device_id, at, kind, region_id) VALUES ('s', 'mac:01', '2030-01-20T10:00:00Z', 'enter', 'a')
            ON CONFLICT DO NOTHING
            """)
        #expect(dup.affectedRows == 0)
        #expect(try conn.query("SELECT count(*) FROM pg_indexes WHERE tablename = 'region_events_203001'").first?.int(0) == 2)
    }

    /// Retention drops the months before the horizon, the journeys that ended before it and the
    /// late rows in the default partitions; every rollup (of the dropped months as of the kept
    /// ones) stays as it was, through a refresh after late data and through a rebuild.
    @Test func retentionDropsOldMonthsAndTheReportsKeepTheirFigures() throws {
        let (db, conn, fixture, runner) = try ReportSQLTests.loaded("retention")
        defer { conn.close(); db.drop() }
        let site = fixture.site.id
        // The months were prepared in time in production: here the fixture went to the default
        // partitions (the database was made today), and the upkeep moves it into June's.
        #expect(try conn.query("SELECT waymark_prepare_history_partitions('2026-06-01', '2026-07-31')").first?.int(0) == 6)
        #expect(try placement(conn, "visits")["visits_default"] == nil)
        #expect(try runner.refresh() == 0, "moving rows between partitions marks no hour")
        // The fixture's fortnight (1–14 June 2026) again 20 days later (21 June – 4 July), so that
        // the horizon of 1 July (a Wednesday) cuts a week with data on both sides. Visits across
        // the horizon are left out: one that began before it loses its presence after a rebuild.
        let shift = "interval '20 days'"
        let horizon = "'2026-07-01T00:00:00Z'::timestamptz"
        try conn.transaction { tx in
            try tx.query("""
                INSERT INTO journeys (site_id, device_id, started_at, ended_at, duration_s, regions)
                SELECT site_id, device_id, started_at + \(shift), ended_at + \(shift), duration_s, regions FROM journeys WHERE site_id = $1
                """, [site])
            try tx.query("""
                INSERT INTO visits (site_id, device_id, region_id, entered_at, exited_at, dwell_s, inferred, journey_id)
                SELECT v.site_id, v.device_id, v.region_id, v.entered_at + \(shift), v.exited_at + \(shift), v.dwell_s, v.inferred, n.journey_id
                FROM visits v
                LEFT JOIN journeys o ON o.journey_id = v.journey_id
                LEFT JOIN journeys n ON n.site_id = o.site_id AND n.device_id = o.device_id AND n.started_at = o.started_at + \(shift)
                WHERE v.site_id = $1 AND NOT (v.entered_at + \(shift) < \(horizon) AND v.exited_at + \(shift) > \(horizon))
                """, [site])
            try tx.query("""
                INSERT INTO transitions (site_id, device_id, from_region, to_region, at, inferred)
                SELECT site_id, device_id, from_region, to_region, at + \(shift), inferred FROM transitions WHERE site_id = $1
                """, [site])
            try tx.query("""
                INSERT INTO entrance_heard (site_id, region_id, device_id, hour, first_heard_at, last_heard_at)
                SELECT site_id, region_id, device_id, hour + \(shift), first_heard_at + \(shift), last_heard_at + \(shift)
                FROM entrance_heard WHERE site_id = $1
                """, [site])
        }
        try insertEvents(conn, site)
        #expect(try runner.refresh() > 0)
        let checks = ReportRefreshTests()
        let before = try checks.snapshot(conn, site)
        func count(_ sql: String) throws -> Int { try conn.query(sql, [site]).first?.int(0) ?? -1 }
        let keptVisits = try count("SELECT count(*) FROM visits WHERE site_id = $1 AND entered_at >= \(horizon)")
        let keptJourneys = try count("SELECT count(*) FROM journeys WHERE site_id = $1 AND ended_at >= \(horizon)")
        let keptEvents = try count("SELECT count(*) FROM region_events WHERE site_id = $1 AND at >= \(horizon)")
        #expect(keptVisits > 100 && keptJourneys > 10)
        #expect(try count("SELECT count(*) FROM journeys WHERE site_id = $1 AND ended_at < \(horizon)") > 0)

        // 5 August 2026 with 31 days of retention: everything before 1 July goes.
        let store = AggregatorStore(siteID: site)
        let done = try store.maintainHistory(conn, now: Date(timeIntervalSince1970: 1_785_888_000), retentionDays: 31)
        #expect(done.keptFrom == "2026-07-01")
        #expect(done.droppedPartitions == 3, "June 2026 of the three tables")
        #expect(done.droppedJourneys > 0)
        #expect(try count("SELECT count(*) FROM visits WHERE site_id = $1") == keptVisits)
        #expect(try count("SELECT count(*) FROM journeys WHERE site_id = $1") == keptJourneys)
        #expect(try count("SELECT count(*) FROM region_events WHERE site_id = $1") == keptEvents)
        #expect(try count("SELECT count(*) FROM transitions WHERE site_id = $1 AND at < \(horizon)") == 0)
        #expect(try count("SELECT count(*) FROM entrance_heard WHERE site_id = $1 AND hour < \(horizon)") == 0)
        _ = try runner.refresh()
        checks.expectSame(before, try checks.snapshot(conn, site), "rollups after retention and a refresh")

        // Late evidence for a dropped month: into the default partition; its hour is not rebuilt.
        try conn.query("""
            INSERT INTO visits (site_id, device_id, region_id, entered_at, exited_at, dwell_s)
            VALUES ($1, 'mac:late', 'lobby', '2026-06-10T10:00:00Z', '2026-06-10T10:05:00Z', 300)
            """, [site])
        #expect(try placement(conn, "visits")["visits_default"] == 1)
        _ = try runner.refresh()
        checks.expectSame(before, try checks.snapshot(conn, site), "rollups after late data for a dropped month")
        let again = try store.maintainHistory(conn, now: Date(timeIntervalSince1970: 1_785_888_000), retentionDays: 31)
        #expect(again.lateRows == 1 && again.droppedPartitions == 0 && again.created == 0)

        // A rebuild keeps the dropped history's rollups and rebuilds the rest to the same rows.
        _ = try conn.query("SELECT waymark_report_rebuild($1)", [site])
        checks.expectSame(before, try checks.snapshot(conn, site), "rollups rebuilt after retention")

        // New data in the kept part of the straddling week: the incremental refresh equals a rebuild.
        try conn.query("""
            INSERT INTO visits (site_id, device_id, region_id, entered_at, exited_at, dwell_s)
            VALUES ($1, 'mac:new', 'lobby', '2026-07-02T10:00:00Z', '2026-07-02T10:07:00Z', 420)
            """, [site])
        #expect(try runner.refresh() == 1)
        let incremental = try checks.snapshot(conn, site)
        #expect(incremental != before)
        _ = try conn.query("SELECT waymark_report_rebuild($1)", [site])
        checks.expectSame(incremental, try checks.snapshot(conn, site), "incremental refresh vs rebuild after retention")
    }
}
