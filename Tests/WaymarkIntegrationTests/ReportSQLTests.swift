import Foundation
import Testing
import WaymarkPostgres
import WaymarkReports

/// Every report, run through `ReportRunner` against the real PostgreSQL with the repository's
/// migrations, checked against `ReportTruth` (figures computed in Swift from the same fixture).
@Suite("Reports against PostgreSQL", .enabled(if: PostgresTestServer.shouldRun))
struct ReportSQLTests {
    /// A migrated database with the fixture loaded in two rounds (even devices, refresh, odd devices
    /// and gateway health, refresh), so the second refresh rebuilds periods that already had rollups.
    static func loaded(_ label: String) throws -> (PostgresTestDatabase, PostgresConnection, ReportFixture, ReportRunner) {
        let fixture = try ReportFixture()
        let db = try PostgresTestDatabase(label)
        let conn = try db.connect()
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(conn)
        let runner = try ReportRunner(connection: conn)
        try fixture.insertSite(into: conn)
        func even(_ device: String) -> Bool { (Int(device.split(separator: ":").last ?? "") ?? 0) % 2 == 0 }
        try fixture.insertMovement(into: conn, devices: { even($0) })
        #expect(try runner.refresh() > 0)
        try fixture.insertMovement(into: conn, devices: { !even($0) })
        try fixture.insertGatewayHealth(into: conn)
        #expect(try runner.refresh(site: fixture.site.id) > 0)
        #expect(try runner.refresh() == 0, "a second refresh finds nothing to do")
        return (db, conn, fixture, runner)
    }

    static let day: Int64 = 86_400
    static let cases: [(from: Int64, to: Int64, period: ReportPeriod, region: String?)] = [
        (ReportFixture.start, ReportFixture.start + 14 * day, .day, nil),
        (ReportFixture.start, ReportFixture.start + 14 * day, .week, nil),
        (ReportFixture.start + 2 * day, ReportFixture.start + 4 * day, .hour, nil),
        (ReportFixture.start + 3 * day + 12 * 3600 + 17, ReportFixture.start + 10 * day, .day, "lobby"),
        (ReportFixture.start + 5 * day, ReportFixture.start + 12 * day, .week, "hall-b"),
    ]

    @Test func everyReportMatchesFiguresComputedFromTheVisits() throws {
        let (db, conn, fixture, runner) = try Self.loaded("figures")
        defer { conn.close(); db.drop() }
        #expect(fixture.visits.count > 500, "the fixture is big enough to mean something: \(fixture.visits.count) visits")
        try checkEveryReport(fixture, runner)
    }

    /// Deleting a journey (visits of several hours, its transitions and the journey row) marks its
    /// hours dirty; the refresh rebuilds them and their days and weeks, dropping rows that emptied.
    @Test func refreshAfterDeletingAJourneyMatchesTheRemainingVisits() throws {
        let (db, conn, loaded, runner) = try Self.loaded("delete")
        defer { conn.close(); db.drop() }
        var fixture = loaded
        // A later journey of its device (so the device's first visit stays) with a visit over an hour long.
        let index = try #require(fixture.journeys.indices.first { i in
            let j = fixture.journeys[i]
            return fixture.journeys[..<i].contains { $0.device == j.device }
                && fixture.visits.contains { $0.journey == i && $0.exited - $0.entered > 3600 }
        })
        let j = fixture.journeys[index]
        let window: [(any PostgresEncodable)?] = [fixture.site.id, j.device, ReportFixture.ts(j.started), ReportFixture.ts(j.ended)]
        try conn.query("DELETE FROM visits WHERE site_id = $1 AND device_id = $2 AND entered_at BETWEEN $3 AND $4", window)
        try conn.query("DELETE FROM transitions WHERE site_id = $1 AND device_id = $2 AND at BETWEEN $3 AND $4", window)
        try conn.query("DELETE FROM journeys WHERE site_id = $1 AND device_id = $2 AND started_at = $3", Array(window.prefix(3)))
        fixture.visits.removeAll { $0.journey == index }
        fixture.transitions.removeAll { $0.device == j.device && $0.at >= j.started && $0.at <= j.ended }
        fixture.journeys.remove(at: index)
        #expect(try runner.refresh() >= 2, "the journey's hours were marked")
        try checkEveryReport(fixture, runner)
    }

    /// Schema 0117 reads the gateway statuses of the range only (and the one in force when it
    /// starts); its rows must be 0106's, which read the whole history, for any range: ranges
    /// starting before the history, between two statuses, a few minutes long, running past the
    /// data and past now(), with and without a region.
    @Test func gatewaysReportEqualsTheWholeHistoryDefinition() throws {
        let (db, conn, fixture, _) = try Self.loaded("gateways0117")
        defer { conn.close(); db.drop() }
        #expect(fixture.statuses.count > 50, "the fixture has a status history: \(fixture.statuses.count)")
        // 0106's function as it was, under another name, for this session only.
        var sql = try String(contentsOfFile: repositorySchemaDirectory + "/0106_report_gateways.sql", encoding: .utf8)
        let end = try #require(sql.range(of: "COMMENT ON FUNCTION"))
        sql = String(sql[..<end.lowerBound])
        sql = sql.replacingOccurrences(of: "CREATE FUNCTION waymark_report_gateways(", with: "CREATE FUNCTION pg_temp.gateways_0106(")
        try conn.execute(sql)
        let s = ReportFixture.start, d = Self.day
        let now = Int64(Date().timeIntervalSince1970)
        let ranges: [(Int64, Int64)] = [
            (s - 3 * 3600, s + d), (s + d + 17, s + 3 * d + 5 * 3600 + 1), (s + 5 * d + 600, s + 5 * d + 1200),
            (s + 2 * d + 1234, s + Int64(ReportFixture.days + 2) * d), (s + 9 * d, s + 9 * d + 1), (now - d, now + 2 * d),
        ]
        var rows = 0
        for (from, to) in ranges {
            for region in [nil, "lobby"] as [String?] {
                let p: [(any PostgresEncodable)?] = [fixture.site.id, ReportFixture.ts(from), ReportFixture.ts(to), region]
                // One statement, so both see the same now().
                let row = try #require(try conn.query("""
                    SELECT (SELECT count(*) FROM waymark_report_gateways($1, $2::timestamptz, $3::timestamptz, $4, 'day'))::int8,
                           (SELECT count(*) FROM (
                                SELECT * FROM waymark_report_gateways($1, $2::timestamptz, $3::timestamptz, $4, 'day')
                                EXCEPT ALL SELECT * FROM pg_temp.gateways_0106($1, $2::timestamptz, $3::timestamptz, $4, 'day')) x)::int8,
                           (SELECT count(*) FROM (
                                SELECT * FROM pg_temp.gateways_0106($1, $2::timestamptz, $3::timestamptz, $4, 'day')
                                EXCEPT ALL SELECT * FROM waymark_report_gateways($1, $2::timestamptz, $3::timestamptz, $4, 'day')) x)::int8,
                           (SELECT count(*) FROM waymark_report_gateways($1, $2::timestamptz, $3::timestamptz, $4, 'day')
                             WHERE online_s > 0 AND online_s < extract(epoch FROM least($3::timestamptz, now()) - $2::timestamptz))::int8
                    """, p).first)
                let label = "\(ReportDate.iso(from))…\(ReportDate.iso(to)) region \(region ?? "all")"
                let count = try row.int(0), onlyNew = try row.int(1), onlyOld = try row.int(2), partly = try row.int(3)
                #expect(onlyNew == 0 && onlyOld == 0, "gateways \(label): rows only in 0117: \(onlyNew), only in 0106: \(onlyOld)")
                rows += count
                if region == nil && to - from > 2 * d && from < s + 6 * d { #expect(partly > 0, "gateways \(label): some gateway was online part of the range") }
            }
        }
        #expect(rows >= ranges.count * fixture.site.gateways.count, "every gateway has a row in every range: \(rows)")
    }

    /// Runs every report for each of `cases` and compares it with `ReportTruth`.
    func checkEveryReport(_ fixture: ReportFixture, _ runner: ReportRunner) throws {
        for c in Self.cases {
            let truth = ReportTruth(fixture: fixture, from: c.from, to: c.to, period: c.period, region: c.region)
            let label = "\(ReportDate.iso(c.from))…\(ReportDate.iso(c.to)) by \(c.period) region \(c.region ?? "all")"
            func run(_ kind: ReportKind, limit: Int = 20) throws -> ReportTable {
                try runner.run(ReportRequest(kind: kind, from: c.from, to: c.to, region: kind == .loyalty ? nil : c.region,
                                             period: c.period, limit: limit), site: fixture.site.id)
            }
            let traffic = try run(.traffic)
            compare(keyed(traffic, ["visits", "devices", "inferred_visits"]), truth.traffic().mapValues { $0.map(Double.init) }, "traffic \(label)")
            compare(keyed(try run(.dwell), ["visits", "p50_s", "p90_s", "mean_s", "under_5m", "m5_20", "m20_60", "h1_6", "h6_plus"]),
                    truth.dwell(), "dwell \(label)")
            compare(keyed(try run(.occupancy), ["peak_devices", "average_devices", "device_hours"]), truth.occupancy(), "occupancy \(label)")
            compare(keyed(try run(.transitions), ["transitions", "inferred", "share_of_exits"], period: "from_region", region: "to_region"),
                    truth.transitions(), "transitions \(label)")
            compare(keyed(try run(.capture), ["heard", "visitors", "passers_by", "capture_rate"]), truth.capture(), "capture \(label)",
                    expectRows: c.region.map { fixture.site.region($0)!.isEntrance } ?? true)

            let paths = try run(.paths, limit: 10_000)
            var sqlPaths: [String: [Double]] = [:]
            for row in paths.rows {
                let kind = row[0].textValue!, length = row[1].integerValue!
                let group = kind == "journey" ? "journey" : "subpath\(length)"
                sqlPaths["\(group)|\(row[3].textValue!)"] = [row[4].decimalValue!, row[5].decimalValue!]
            }
            compare(sqlPaths, truth.paths(), "paths \(label)")
            let counts = paths.values("occurrences").map { $0.integerValue! }
            let kinds = paths.values("kind").map { $0.textValue! }
            for i in 1..<counts.count where kinds[i] == "journey" && kinds[i - 1] == "journey" {
                #expect(counts[i] <= counts[i - 1], "paths are ranked by count")
            }
            let top = try run(.paths, limit: 3)
            #expect(top.values("rank").allSatisfy { ($0.integerValue ?? 99) <= 3 })

            let loyalty = try run(.loyalty)
            var sqlLoyalty: [String: [Double]] = [:]
            for row in loyalty.rows { sqlLoyalty[row[0].textValue!] = (1...4).map { row[$0].decimalValue! } }
            compare(sqlLoyalty, truth.loyalty(), "loyalty \(label)")

            let heatmap = try run(.heatmap)
            let grid = truth.heatmap()
            #expect(heatmap.rows.count == 7)
            for row in heatmap.rows {
                let dow = Int(row[0].integerValue!)
                let cells = (0..<24).map { row[2 + $0].integerValue! }
                #expect(cells == grid[dow], "heatmap \(label) day \(dow)")
                #expect(row[26].integerValue == grid[dow].reduce(0, +))
            }
            // All regions' traffic adds up to the heatmap's total when both cover whole hours.
            if c.period == .hour && c.region == nil {
                #expect(traffic.values("visits").compactMap(\.integerValue).reduce(0, +) == heatmap.values("total").compactMap(\.integerValue).reduce(0, +))
            }

            let gateways = try run(.gateways)
            let expected = truth.gateways()
            let shown = c.region.map { r in Set(fixture.site.region(r)!.gateways) } ?? Set(fixture.site.gateways.map(\.id))
            #expect(Set(gateways.values("gateway_id").compactMap(\.textValue)) == shown, "gateways \(label)")
            for row in gateways.rows {
                let id = row[0].textValue!
                let got = [row[1], row[2], row[3], row[5], row[6], row[7], row[8], row[9], row[10]].map { v -> String in
                    if case .decimal(let d) = v { return String(Int64(d.rounded())) }
                    return v.plainText
                }
                #expect(got == expected[id], "gateways \(label) \(id)")
            }
        }
    }

    /// Rows keyed by (period_start, region_id) → the named numeric columns.
    func keyed(_ table: ReportTable, _ columns: [String], period: String = "period_start", region: String = "region_id") -> [ReportTruth.Key: [Double]] {
        let p = table.columnIndex(period)!, r = table.columnIndex(region)!
        let indices = columns.map { table.columnIndex($0)! }
        var out: [ReportTruth.Key: [Double]] = [:]
        for row in table.rows {
            out[ReportTruth.Key(period: row[p].textValue!, region: row[r].textValue!)] = indices.map { row[$0].decimalValue ?? .nan }
        }
        return out
    }

    /// `expectRows`: the case should produce rows (false where none is right, e.g. capture at a
    /// region that is not an entrance); the SQL must then return none either.
    func compare<K: Hashable>(_ got: [K: [Double]], _ want: [K: [Double]], _ label: String, expectRows: Bool = true,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(want.isEmpty != expectRows, "\(label): the ground truth has rows: \(want.count)", sourceLocation: sourceLocation)
        #expect(Set(got.keys) == Set(want.keys), "\(label): rows differ; only in SQL: \(Set(got.keys).subtracting(want.keys)), only in truth: \(Set(want.keys).subtracting(got.keys))", sourceLocation: sourceLocation)
        for (k, w) in want {
            guard let g = got[k] else { continue }
            let close = g.count == w.count && zip(g, w).allSatisfy { abs($0 - $1) <= 1e-6 * max(1, abs($1)) }
            #expect(close, "\(label) \(k): SQL \(g) vs truth \(w)", sourceLocation: sourceLocation)
        }
    }
}
