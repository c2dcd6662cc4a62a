import Foundation
import Testing
import WaymarkPostgres
import WaymarkReports

/// The incremental refresh (schema 0112: day and week figures updated from the dirty hours'
/// changes) against the real PostgreSQL: after visits and entrance sightings change in a few hours,
/// every rollup table and every piece of refresh state equals what a rebuild from scratch makes,
/// and the day and week figures equal count(DISTINCT) and percentile_cont over the visits.
@Suite("Incremental report refresh against PostgreSQL", .enabled(if: PostgresTestServer.shouldRun))
struct ReportRefreshTests {
    /// Every table the refresh writes, as sorted text rows (dwell arrays sorted: their order is the
    /// order visits were read in).
    static let tables: [(name: String, sql: String)] = [
        ("report_region_rollup", "SELECT t::text FROM report_region_rollup t WHERE site_id = $1"),
        ("report_site_rollup", "SELECT t::text FROM report_site_rollup t WHERE site_id = $1"),
        ("report_capture_rollup", "SELECT t::text FROM report_capture_rollup t WHERE site_id = $1"),
        ("report_transition_hourly", "SELECT t::text FROM report_transition_hourly t WHERE site_id = $1"),
        ("report_path_hourly", "SELECT t::text FROM report_path_hourly t WHERE site_id = $1"),
        ("report_path_daily", "SELECT t::text FROM report_path_daily t WHERE site_id = $1"),
        ("report_device_first_visit", "SELECT t::text FROM report_device_first_visit t WHERE site_id = $1"),
        ("report_hour_members", """
            SELECT concat_ws(' ', hour, region_id, devices, ARRAY(SELECT x FROM unnest(dwells) x ORDER BY x), heard)
            FROM report_hour_members WHERE site_id = $1
            """),
        ("report_period_devices", "SELECT t::text FROM report_period_devices t WHERE site_id = $1"),
        ("report_period_counts", "SELECT t::text FROM report_period_counts t WHERE site_id = $1"),
        ("report_period_dwell", "SELECT t::text FROM report_period_dwell t WHERE site_id = $1"),
        ("report_period_dwell_bins", "SELECT t::text FROM report_period_dwell_bins t WHERE site_id = $1"),
    ]
    /// The rollups that existed before 0112 (what the reports read).
    static let rollups = Set(["report_region_rollup", "report_site_rollup", "report_capture_rollup", "report_transition_hourly",
                              "report_path_hourly", "report_path_daily", "report_device_first_visit"])

    @Test func incrementalRefreshEqualsARebuildFromScratch() throws {
        let (db, conn, fixture, runner) = try ReportSQLTests.loaded("incremental")
        defer { conn.close(); db.drop() }
        let site = fixture.site.id
        try expectEqualsRebuild(conn, site, "after the fixture's two loads")

        // A device's journey within one day whose visits each start and end in the same hour, and
        // the device has no other visit that day: all its visits but one go, then that last one.
        let lone = try #require(try conn.query("""
            SELECT v.device_id, v.journey_id
            FROM visits v
            WHERE v.site_id = $1 AND v.journey_id IS NOT NULL
            GROUP BY v.device_id, v.journey_id
            HAVING count(*) >= 2
               AND bool_and(date_trunc('hour', v.entered_at, 'UTC') = date_trunc('hour', v.exited_at, 'UTC'))
               AND count(DISTINCT date_trunc('day', v.entered_at, 'UTC')) = 1
               AND count(DISTINCT date_trunc('hour', v.entered_at, 'UTC')) <= 4
               AND NOT EXISTS (SELECT 1 FROM visits w
                               WHERE w.site_id = $1 AND w.device_id = v.device_id AND w.journey_id <> v.journey_id
                                 AND date_trunc('day', w.entered_at, 'UTC') = date_trunc('day', min(v.entered_at), 'UTC'))
            ORDER BY min(v.entered_at) LIMIT 1
            """, [site]).first, "the fixture has a short same-day journey")
        let device = try lone.string(0), journey = try lone.string(1)
        try conn.query("""
            DELETE FROM visits WHERE site_id = $1 AND device_id = $2 AND journey_id = $3::int8
              AND entered_at > (SELECT min(entered_at) FROM visits WHERE site_id = $1 AND device_id = $2 AND journey_id = $3::int8)
            """, [site, device, journey])
        try expectIncremental(conn, site)
        _ = try runner.refresh()
        try expectEqualsRebuild(conn, site, "after deleting all but one visit of a device's day")
        let removed = try conn.query("DELETE FROM visits WHERE site_id = $1 AND device_id = $2 AND journey_id = $3::int8",
                                     [site, device, journey])
        #expect(removed.affectedRows == 1, "the device's only visit of the day")
        try expectIncremental(conn, site)
        #expect(try runner.refresh() >= 1)
        try expectEqualsRebuild(conn, site, "after deleting a device's only visit in a day")

        // Late data into old hours (day 2 and day 9): visits of known devices and of a new one,
        // inferred and observed, dwell values that are new to their day and week; an entrance
        // sighting of a passer-by and one of a visitor; an hour re-fused (dwell and region changed);
        // an entrance sighting withdrawn; a device's first visit deleted.
        let oldHour = ReportFixture.start + 86_400 + 10 * 3600
        let laterHour = ReportFixture.start + 8 * 86_400 + 15 * 3600
        try conn.query("""
            INSERT INTO visits (site_id, device_id, region_id, entered_at, exited_at, dwell_s, inferred)
            SELECT $1, d.device_id, r.region_id, $2::timestamptz + (600 + 60 * g) * interval '1 second',
                   $2::timestamptz + (600 + 60 * g + 900.25 + g) * interval '1 second', 900.25 + g, g = 2
            FROM (SELECT DISTINCT device_id FROM visits WHERE site_id = $1 ORDER BY device_id LIMIT 4) d
            CROSS JOIN (VALUES ('lobby'), ('cafe')) r(region_id)
            CROSS JOIN generate_series(0, 2) g
            ON CONFLICT DO NOTHING
            """, [site, ReportFixture.ts(oldHour)])
        try conn.query("""
            INSERT INTO visits (site_id, device_id, region_id, entered_at, exited_at, dwell_s)
            VALUES ($1, 'ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:9:9', 'hall-a', $2::timestamptz + interval '5 minutes',
                    $2::timestamptz + interval '20 minutes 0.5 seconds', 900.5)
            """, [site, ReportFixture.ts(laterHour)])
        try conn.query("""
            INSERT INTO entrance_heard (site_id, region_id, device_id, hour, first_heard_at, last_heard_at)
            VALUES ($1, 'entrance', 'mac:02-00-00-00-00-99', $2::timestamptz, $2::timestamptz, $2::timestamptz),
                   ($1, 'entrance', 'ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:9:9', $3::timestamptz, $3::timestamptz, $3::timestamptz)
            ON CONFLICT DO NOTHING
            """, [site, ReportFixture.ts(oldHour), ReportFixture.ts(laterHour)])
        let refused = try conn.query("""
            WITH one AS (
                SELECT device_id, region_id, entered_at FROM visits
                WHERE site_id = $1 AND entered_at >= $2::timestamptz + interval '2 days' AND NOT inferred
                  AND date_trunc('hour', entered_at, 'UTC') = date_trunc('hour', exited_at + interval '7 seconds', 'UTC')
                ORDER BY entered_at LIMIT 3)
            UPDATE visits v SET exited_at = v.exited_at + interval '7 seconds', dwell_s = v.dwell_s + 7,
                                region_id = CASE WHEN v.region_id = 'cafe' THEN 'shop' ELSE v.region_id END
            FROM one WHERE v.site_id = $1 AND v.device_id = one.device_id AND v.region_id = one.region_id AND v.entered_at = one.entered_at
            """, [site, ReportFixture.ts(ReportFixture.start)])
        #expect(refused.affectedRows == 3)
        let withdrawn = try conn.query("""
            DELETE FROM entrance_heard WHERE ctid = (
                SELECT ctid FROM entrance_heard WHERE site_id = $1 AND hour >= $2::timestamptz + interval '4 days' ORDER BY hour, device_id LIMIT 1)
            """, [site, ReportFixture.ts(ReportFixture.start)])
        #expect(withdrawn.affectedRows == 1)
        let first = try conn.query("""
            DELETE FROM visits WHERE (site_id, device_id, region_id, entered_at) = (
                SELECT v.site_id, v.device_id, v.region_id, v.entered_at FROM report_device_first_visit f
                JOIN visits v ON v.site_id = f.site_id AND v.device_id = f.device_id AND v.entered_at = f.first_visit_at
                WHERE f.site_id = $1 AND date_trunc('hour', v.entered_at, 'UTC') = date_trunc('hour', v.exited_at, 'UTC')
                ORDER BY f.first_visit_at LIMIT 1)
            """, [site])
        #expect(first.affectedRows == 1, "a device's first visit")
        try expectIncremental(conn, site)
        #expect(try runner.refresh() >= 5)
        try expectEqualsRebuild(conn, site, "after late visits, a re-fused hour and withdrawn rows")
    }

    /// A database whose rollups the refresh of 0108–0111 built gets 0112: the first refresh after
    /// it builds the new state, and every rollup keeps exactly the rows it had.
    @Test func migratingKeepsEveryRollupRow() throws {
        let fixture = try ReportFixture()
        let db = try PostgresTestDatabase("refreshmigration")
        let conn = try db.connect()
        defer { conn.close(); db.drop() }
        let all = try PostgresMigrator(directory: repositorySchemaDirectory)
        try PostgresMigrator(migrations: all.migrations.filter { $0.version <= 111 }).migrate(conn)
        let runner = try ReportRunner(connection: conn)
        try fixture.insertSite(into: conn)
        try fixture.insertMovement(into: conn, devices: { _ in true })
        #expect(try runner.refresh() > 0)
        let before = try snapshot(conn, fixture.site.id, only: Self.rollups)

        try all.migrate(conn)
        #expect(try runner.refresh() > 0, "the migration marks the hours with visits and entrance sightings")
        let after = try snapshot(conn, fixture.site.id, only: Self.rollups)
        expectSame(before, after, "rollups of the refresh before 0112 and after it")
        try expectEqualsRebuild(conn, fixture.site.id, "after the migration's first refresh")
    }

    /// A database whose refresh state 0112–0114 built (report_period_members, one row per device and
    /// region) gets 0115: the members become report_period_devices rows in place, with the same
    /// (device, region, hours) content, no hour is marked dirty, every other table keeps its rows,
    /// and the converted state equals what a rebuild makes; incremental refreshes then stay exact.
    @Test func migratingToPeriodDevicesKeepsEveryRow() throws {
        let fixture = try ReportFixture()
        let db = try PostgresTestDatabase("perioddevices")
        let conn = try db.connect()
        defer { conn.close(); db.drop() }
        let site = fixture.site.id
        let all = try PostgresMigrator(directory: repositorySchemaDirectory)
        try PostgresMigrator(migrations: all.migrations.filter { $0.version <= 114 }).migrate(conn)
        let runner = try ReportRunner(connection: conn)
        try fixture.insertSite(into: conn)
        try fixture.insertMovement(into: conn, devices: { _ in true })
        #expect(try runner.refresh() > 0)
        try conn.execute("SET TimeZone = 'UTC'")
        let members = try conn.query("""
            SELECT * FROM (
                SELECT concat_ws(' ', period, period_start, kind, device_id, region_id, hours)
                FROM report_period_members WHERE site_id = $1
            ) s(row) ORDER BY row COLLATE "C"
            """, [site]).rows.map { try $0.string(0) }
        #expect(members.contains { $0.contains(" heard ") } && members.contains { $0.contains(" visit ") }, "both kinds of members")
        #expect(try conn.query("SELECT 1 FROM report_period_members WHERE site_id = $1 AND hours > 1 LIMIT 1", [site]).rows.count == 1,
                "members seen in more than one hour of their period")
        let others = Set(Self.tables.map(\.name)).subtracting(["report_period_devices"])
        let before = try snapshot(conn, site, only: others)

        try all.migrate(conn)
        #expect(try conn.query("SELECT count(*)::int8 FROM report_dirty_hours").first?.int(0) == 0, "no hour to refresh")
        try conn.execute("SET TimeZone = 'UTC'")
        let converted = try conn.query("""
            SELECT * FROM (
                SELECT concat_ws(' ', period, period_start, 'visit', device_id, x.r, x.n)
                FROM report_period_devices, unnest(visit_regions, visit_hours) AS x(r, n) WHERE site_id = $1
                UNION ALL
                SELECT concat_ws(' ', period, period_start, 'heard', device_id, x.r, x.n)
                FROM report_period_devices, unnest(heard_regions, heard_hours) AS x(r, n) WHERE site_id = $1
            ) s(row) ORDER BY row COLLATE "C"
            """, [site]).rows.map { try $0.string(0) }
        #expect(converted == members, "report_period_devices holds exactly the members (\(converted.count) vs \(members.count))")
        expectSame(before, try snapshot(conn, site, only: others), "every other table across 0115")
        try expectEqualsRebuild(conn, site, "the state converted by 0115")
    }

    /// A database whose state 0112–0115 built (dwell values in the order the visits were read) gets
    /// 0116: nothing is marked, no row changes. On top of that state, the refresh of 0116 — which
    /// leaves out unchanged (hour, region) state, keeps the percentiles of regions whose dwell values
    /// did not change and reads first visits per device — gives what a rebuild from scratch gives:
    /// an hour marked with nothing changed in it changes no row; then late visits in one region only,
    /// a visit before a device's recorded first visit in the same hour, and a deleted first visit
    /// whose device has a later visit in that hour.
    @Test func leanRefreshOnTheStateOfEarlierMigrationsStaysExact() throws {
        let fixture = try ReportFixture()
        let db = try PostgresTestDatabase("leanrefresh")
        let conn = try db.connect()
        defer { conn.close(); db.drop() }
        let site = fixture.site.id
        let all = try PostgresMigrator(directory: repositorySchemaDirectory)
        try PostgresMigrator(migrations: all.migrations.filter { $0.version <= 115 }).migrate(conn)
        let runner = try ReportRunner(connection: conn)
        try fixture.insertSite(into: conn)
        try fixture.insertMovement(into: conn, devices: { _ in true })
        #expect(try runner.refresh() > 0)
        let before = try snapshot(conn, site)

        try all.migrate(conn)
        #expect(try conn.query("SELECT count(*)::int8 FROM report_dirty_hours").first?.int(0) == 0, "no hour to refresh")
        expectSame(before, try snapshot(conn, site), "every table across 0116")

        // The busiest hour, marked with nothing changed in it.
        let busiest = try #require(try conn.query("""
            SELECT to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') FROM report_hour_members WHERE site_id = $1
            GROUP BY hour ORDER BY sum(cardinality(devices)) DESC, hour LIMIT 1
            """, [site]).first).string(0)
        try conn.query("INSERT INTO report_dirty_hours (site_id, hour) VALUES ($1, $2::timestamptz)", [site, busiest])
        #expect(try runner.refresh() == 1)
        expectSame(before, try snapshot(conn, site), "after refreshing an hour with nothing changed in it")

        // Late visits into one region of one hour, with dwell values new to its day and week (the
        // other regions' percentiles are kept, not recomputed).
        let hour = ReportFixture.start + 3 * 86_400 + 11 * 3600
        let late = try conn.query("""
            INSERT INTO visits (site_id, device_id, region_id, entered_at, exited_at, dwell_s)
            SELECT $1, d.device_id, 'hall-b', $2::timestamptz + (60 * g + 30) * interval '1 second',
                   $2::timestamptz + (60 * g + 30 + 4000.5 + g) * interval '1 second', 4000.5 + g
            FROM (SELECT DISTINCT device_id FROM visits WHERE site_id = $1 ORDER BY device_id LIMIT 3) d
            CROSS JOIN generate_series(0, 4) g
            ON CONFLICT DO NOTHING
            """, [site, ReportFixture.ts(hour)])
        #expect(late.affectedRows == 15)
        // A device's recorded first visit gets an earlier visit in the same hour; another's first
        // visit is deleted while a later visit of the same hour remains.
        let earlier = try conn.query("""
            INSERT INTO visits (site_id, device_id, region_id, entered_at, exited_at, dwell_s)
            SELECT f.site_id, f.device_id, 'shop', f.first_visit_at - interval '1 second', f.first_visit_at + interval '9 seconds', 10
            FROM report_device_first_visit f
            WHERE f.site_id = $1 AND date_trunc('hour', f.first_visit_at - interval '1 second', 'UTC') = date_trunc('hour', f.first_visit_at, 'UTC')
              AND date_trunc('hour', f.first_visit_at + interval '9 seconds', 'UTC') = date_trunc('hour', f.first_visit_at, 'UTC')
            ORDER BY f.first_visit_at LIMIT 1
            ON CONFLICT DO NOTHING
            """, [site])
        #expect(earlier.affectedRows == 1, "an earlier visit in the hour of a recorded first visit")
        let gone = try conn.query("""
            DELETE FROM visits WHERE (site_id, device_id, region_id, entered_at) = (
                SELECT v.site_id, v.device_id, v.region_id, v.entered_at FROM report_device_first_visit f
                JOIN visits v ON v.site_id = f.site_id AND v.device_id = f.device_id AND v.entered_at = f.first_visit_at
                WHERE f.site_id = $1 AND date_trunc('hour', v.exited_at, 'UTC') = date_trunc('hour', v.entered_at, 'UTC')
                  AND EXISTS (SELECT 1 FROM visits w WHERE w.site_id = v.site_id AND w.device_id = v.device_id
                                AND w.entered_at > v.entered_at AND date_trunc('hour', w.entered_at, 'UTC') = date_trunc('hour', v.entered_at, 'UTC'))
                ORDER BY f.first_visit_at DESC LIMIT 1)
            """, [site])
        #expect(gone.affectedRows == 1, "a first visit with a later visit in its hour")
        try expectIncremental(conn, site)
        #expect(try runner.refresh() >= 2)
        try expectEqualsRebuild(conn, site, "after late visits in one region and moved first visits, on 0115's state")
    }

    /// The dirty hours cover less than a quarter of every day (the refresh rebuilds whole periods
    /// from half on), so the refresh takes the incremental path for days and weeks.
    func expectIncremental(_ conn: PostgresConnection, _ site: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let most = try conn.query("""
            SELECT coalesce(max(n), 0)::int8 FROM (
                SELECT count(*) AS n FROM report_dirty_hours WHERE site_id = $1 GROUP BY date_trunc('day', hour, 'UTC')) d
            """, [site]).first?.int(0) ?? 0
        #expect(most > 0 && most < 6, "dirty hours in the busiest day: \(most)", sourceLocation: sourceLocation)
    }

    /// Snapshots every table, rebuilds the site's rollups from scratch, snapshots again and expects
    /// the same rows; then checks the day and week figures against the visits themselves.
    func expectEqualsRebuild(_ conn: PostgresConnection, _ site: String, _ label: String,
                             sourceLocation: SourceLocation = #_sourceLocation) throws {
        let incremental = try snapshot(conn, site)
        #expect((incremental["report_period_devices"]?.count ?? 0) > 0, "\(label): the state is there", sourceLocation: sourceLocation)
        _ = try conn.query("SELECT waymark_report_rebuild($1)", [site])
        expectSame(incremental, try snapshot(conn, site), "\(label): incremental refresh vs rebuild", sourceLocation: sourceLocation)
        try expectExactPeriods(conn, site, label, sourceLocation: sourceLocation)
    }

    func snapshot(_ conn: PostgresConnection, _ site: String, only: Set<String>? = nil) throws -> [String: [String]] {
        try conn.execute("SET TimeZone = 'UTC'")
        var out: [String: [String]] = [:]
        for table in Self.tables where only?.contains(table.name) ?? true {
            out[table.name] = try conn.query("SELECT * FROM (\(table.sql)) s(row) ORDER BY row COLLATE \"C\"", [site]).rows.map { try $0.string(0) }
        }
        return out
    }

    func expectSame(_ a: [String: [String]], _ b: [String: [String]], _ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(Set(a.keys) == Set(b.keys), "\(label): tables", sourceLocation: sourceLocation)
        for (table, rows) in a.sorted(by: { $0.key < $1.key }) {
            let other = b[table] ?? []
            let onlyA = Set(rows).subtracting(other).sorted().prefix(5), onlyB = Set(other).subtracting(rows).sorted().prefix(5)
            #expect(rows == other, "\(label): \(table) differs (\(rows.count) vs \(other.count) rows); only first: \(Array(onlyA)); only second: \(Array(onlyB))",
                    sourceLocation: sourceLocation)
        }
    }

    /// Distinct devices and dwell percentiles per region, distinct devices site-wide and entrance
    /// capture, per day and week, as 0109 computed them from the raw rows, against the rollups.
    func expectExactPeriods(_ conn: PostgresConnection, _ site: String, _ label: String, sourceLocation: SourceLocation) throws {
        let wrong = try conn.query("""
            WITH periods(p) AS (VALUES ('day'), ('week')),
            regions AS (
                SELECT p, date_trunc(p, entered_at, 'UTC') AS ps, region_id, count(DISTINCT device_id) AS devices,
                       percentile_cont(0.5) WITHIN GROUP (ORDER BY dwell_s) FILTER (WHERE NOT inferred) AS p50,
                       percentile_cont(0.9) WITHIN GROUP (ORDER BY dwell_s) FILTER (WHERE NOT inferred) AS p90
                FROM visits, periods WHERE site_id = $1 GROUP BY 1, 2, 3
            ), site AS (
                SELECT p, date_trunc(p, entered_at, 'UTC') AS ps, count(DISTINCT device_id) AS devices
                FROM visits, periods WHERE site_id = $1 GROUP BY 1, 2
            ), heard AS (
                SELECT DISTINCT p, date_trunc(p, hour, 'UTC') AS ps, region_id, device_id FROM entrance_heard, periods WHERE site_id = $1
            ), inside AS (
                SELECT DISTINCT p, date_trunc(p, entered_at, 'UTC') AS ps, device_id FROM visits, periods WHERE site_id = $1
            ), capture AS (
                SELECT h.p, h.ps, h.region_id, count(*) AS heard, count(i.device_id) AS visitors
                FROM heard h LEFT JOIN inside i USING (p, ps, device_id) GROUP BY 1, 2, 3
            )
            SELECT
              (SELECT count(*) FROM regions e
               FULL JOIN (SELECT * FROM report_region_rollup WHERE site_id = $1 AND period <> 'hour' AND visits > 0) r
                 ON r.period = e.p AND r.period_start = e.ps AND r.region_id = e.region_id
               WHERE r.devices IS DISTINCT FROM e.devices OR r.dwell_p50_s IS DISTINCT FROM e.p50 OR r.dwell_p90_s IS DISTINCT FROM e.p90)
              + (SELECT count(*) FROM site e
                 FULL JOIN (SELECT * FROM report_site_rollup WHERE site_id = $1 AND period <> 'hour') r ON r.period = e.p AND r.period_start = e.ps
                 WHERE r.devices IS DISTINCT FROM e.devices)
              + (SELECT count(*) FROM capture e
                 FULL JOIN (SELECT * FROM report_capture_rollup WHERE site_id = $1 AND period <> 'hour') r
                   ON r.period = e.p AND r.period_start = e.ps AND r.region_id = e.region_id
                 WHERE r.heard IS DISTINCT FROM e.heard OR r.visitors IS DISTINCT FROM e.visitors)
            """, [site]).first?.int(0)
        #expect(wrong == 0, "\(label): day and week rows that differ from count(DISTINCT) / percentile_cont over the raw rows", sourceLocation: sourceLocation)
    }
}
