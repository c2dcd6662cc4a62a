import WaymarkPostgres
import WaymarkReports

/// The incremental refresh in the middle of the data (a full ISO week around the hour, unlike the
/// last hour whose week holds two days), and a check that the day and week figures the refresh
/// maintains from hour changes equal a recomputation from that week's visits.
extension ReportBenchmark {
    /// 2026-06-17 15:00 UTC: a Wednesday in the full week of 2026-06-15.
    static let middleHour: Int64 = start + 16 * 86_400 + 15 * 3600
    static let middleWeek: Int64 = start + 14 * 86_400

    static func measureMiddleHour(_ db: PostgresConnection, _ runner: ReportRunner, visits: Int) throws {
        // An hour marked dirty with nothing changed in it (as by
        // `INSERT INTO report_dirty_hours VALUES ('bench-venue', '2026-06-17 15:00+00')`).
        try db.query("INSERT INTO report_dirty_hours (site_id, hour) VALUES ($1, $2::timestamptz)", [site, iso(middleHour)])
        var t = clock()
        var touched = try runner.refresh()
        print(String(format: "  refresh, middle hour %7.2f s  (%d hour(s) rebuilt, 2026-06-17 15:00, nothing changed in it; its day and full week)",
                     clock() - t, touched))

        // The same hour changed: a tenth of the visits that start and end in it deleted, and as many
        // late visits of existing devices added as an hour holds (devices that may already be in
        // the day and week, or not), all within the hour so that only it is dirty.
        let late = visits / Int(days * 24)
        let deleted = try db.query("""
            WITH gone AS (
                DELETE FROM visits
                WHERE site_id = $1 AND entered_at >= $2::timestamptz AND entered_at < $2::timestamptz + interval '1 hour'
                  AND exited_at < $2::timestamptz + interval '1 hour' AND hashtext(device_id) % 10 = 0
                RETURNING 1)
            SELECT count(*)::int8 FROM gone
            """, [site, iso(middleHour)]).first?.int(0) ?? 0
        let added = try db.query("""
            WITH added AS (
                INSERT INTO visits (site_id, device_id, region_id, entered_at, exited_at, dwell_s)
                SELECT $1, format('ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:%s:%s', (i * 7919) % 250000 / 1000, (i * 7919) % 1000),
                       'r' || (i % $3::int), $2::timestamptz + (i % 2600) * interval '1 second',
                       $2::timestamptz + (i % 2600 + 30 + i % 900) * interval '1 second', 30 + i % 900
                FROM generate_series(0, $4::int - 1) AS i
                ON CONFLICT DO NOTHING
                RETURNING 1)
            SELECT count(*)::int8 FROM added
            """, [site, iso(middleHour), regionCount, late]).first?.int(0) ?? 0
        t = clock()
        touched = try runner.refresh()
        print(String(format: "  refresh, middle hour %7.2f s  (%d hour(s) rebuilt: %d of its visits deleted, %d late visits added)",
                     clock() - t, touched, deleted, added))
        try checkMiddleWeek(db)
        try printStateSizes(db)
    }

    /// Distinct devices, dwell percentiles (region rows), site devices and capture of the middle
    /// week and its days, as the rollups hold them, against the same figures computed from the
    /// visits and entrance sightings with count(DISTINCT) and percentile_cont.
    static func checkMiddleWeek(_ db: PostgresConnection) throws {
        let t = clock()
        // The planner misjudges the grouped sets below and merge-joins the capture part on the
        // period only (quadratic in the week's devices): hash joins are what this needs.
        try db.execute("SET enable_mergejoin = off")
        defer { try? db.execute("RESET enable_mergejoin") }
        let row = try db.query("""
            WITH v AS (
                SELECT * FROM visits WHERE site_id = $1 AND entered_at >= $2::timestamptz AND entered_at < $2::timestamptz + interval '1 week'
            ), periods(p) AS (VALUES ('day'), ('week')),
            expected_regions AS (
                SELECT p, date_trunc(p, entered_at, 'UTC') AS ps, region_id, count(DISTINCT device_id) AS devices,
                       percentile_cont(0.5) WITHIN GROUP (ORDER BY dwell_s) FILTER (WHERE NOT inferred) AS p50,
                       percentile_cont(0.9) WITHIN GROUP (ORDER BY dwell_s) FILTER (WHERE NOT inferred) AS p90
                FROM v, periods GROUP BY 1, 2, 3
            ), expected_site AS (
                SELECT p, date_trunc(p, entered_at, 'UTC') AS ps, count(DISTINCT device_id) AS devices FROM v, periods GROUP BY 1, 2
            ), heard AS (
                SELECT DISTINCT p, date_trunc(p, hour, 'UTC') AS ps, region_id, device_id
                FROM entrance_heard, periods
                WHERE site_id = $1 AND hour >= $2::timestamptz AND hour < $2::timestamptz + interval '1 week'
            ), inside AS (
                SELECT DISTINCT p, date_trunc(p, entered_at, 'UTC') AS ps, device_id FROM v, periods
            ), expected_capture AS (
                SELECT h.p, h.ps, h.region_id, count(*) AS heard, count(i.device_id) AS visitors
                FROM heard h LEFT JOIN inside i USING (p, ps, device_id) GROUP BY 1, 2, 3
            )
            SELECT
              (SELECT count(*) FROM expected_regions),
              (SELECT count(*) FROM expected_regions e LEFT JOIN report_region_rollup r
                 ON r.site_id = $1 AND r.period = e.p AND r.period_start = e.ps AND r.region_id = e.region_id
               WHERE r.devices IS DISTINCT FROM e.devices OR r.dwell_p50_s IS DISTINCT FROM e.p50 OR r.dwell_p90_s IS DISTINCT FROM e.p90)
              + (SELECT count(*) FROM expected_site e LEFT JOIN report_site_rollup r
                   ON r.site_id = $1 AND r.period = e.p AND r.period_start = e.ps
                 WHERE r.devices IS DISTINCT FROM e.devices)
              + (SELECT count(*) FROM expected_capture e LEFT JOIN report_capture_rollup r
                   ON r.site_id = $1 AND r.period = e.p AND r.period_start = e.ps AND r.region_id = e.region_id
                 WHERE r.heard IS DISTINCT FROM e.heard OR r.visitors IS DISTINCT FROM e.visitors)
            """, [site, iso(middleWeek)]).first
        let checked = try row?.int(0) ?? 0, wrong = try row?.int(1) ?? -1
        let verdict = wrong == 0 ? "equal to count(DISTINCT) and percentile_cont over the visits" : "WRONG in \(wrong) row(s)"
        print(String(format: "  check, middle week  %8.1f s  (%d region rows of its days and week: devices, p50, p90, site devices, capture ", clock() - t, checked)
              + verdict + ")")
    }

    /// On-disk size of the refresh's per-hour and per-period state next to the visits table.
    static func printStateSizes(_ db: PostgresConnection) throws {
        let row = try db.query("""
            SELECT (SELECT sum(pg_total_relation_size(relid))::int8 FROM pg_partition_tree('visits')),  -- its partitions (schema 0011)
                   pg_total_relation_size('report_hour_members'),
                   pg_total_relation_size('report_period_devices'),
                   pg_total_relation_size('report_period_dwell') + pg_total_relation_size('report_period_dwell_bins')
                     + pg_total_relation_size('report_period_counts'),
                   (SELECT count(*) FROM report_period_devices)
            """).first
        func mb(_ i: Int) throws -> Double { Double(try row?.int(i) ?? 0) / 1_048_576 }
        print(String(format: "  refresh state: hour members %.0f MB, period devices %.0f MB (%d rows), dwell values and counts %.0f MB; visits %.0f MB",
                     try mb(1), try mb(2), try row?.int(4) ?? 0, try mb(3), try mb(0)))
    }
}
