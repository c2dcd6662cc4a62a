import Foundation
import WaymarkCore
import WaymarkPostgres
import WaymarkReports

/// `waymark-bench reports [VISITS]`: loads VISITS visits (default 10 million) over 30 days, with
/// their journeys, transitions, entrance sightings and gateway history, into a private database
/// with COPY (indexes and keys of the big tables dropped during the COPY and rebuilt after; the
/// report triggers stay on); refreshes the rollups; then times every report over the 30 days
/// (best of 3 runs).
/// Target: every report under 2 s. Needs WAYMARK_DATABASE_URL (a superuser, e.g. from
/// `source scripts/services.sh; services_start /tmp/x`); the database it creates is dropped at the
/// end unless WAYMARK_BENCH_KEEP=1.
enum ReportBenchmark {
    static let start: Int64 = 1_780_272_000  // 2026-06-01T00:00:00Z
    static let days: Int64 = 30
    static let site = "bench-venue"
    static let side = 5  // a 5 x 4 grid of regions
    static let regionCount = 20

    static func run() {
        guard let url = ProcessInfo.processInfo.environment["WAYMARK_DATABASE_URL"], !url.isEmpty else {
            print("""
                reports: needs a PostgreSQL server: run it as `scripts/bench.sh reports`, which starts a
                private one with PostgreSQL's durable settings (or set WAYMARK_DATABASE_URL).
                """)
            return
        }
        let visits = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 10_000_000 : 10_000_000
        let database = "waymark_bench_reports_\(getpid())"
        do {
            let admin = try PostgresConnection(url: url)
            defer { admin.close() }
            print("reports: PostgreSQL \(PostgresDurability.describe(admin))")
            try admin.execute("CREATE DATABASE \(database)")
            let keep = ProcessInfo.processInfo.environment["WAYMARK_BENCH_KEEP"] == "1"
            defer {
                if keep { print("reports: kept database \(database) (WAYMARK_BENCH_KEEP=1); drop it when done") } else {
                    try? admin.execute("DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
                }
            }
            let db = try PostgresConnection(url: PostgresURL.withDatabase(url, database))
            defer { db.close() }
            try measure(db, visits: visits)
        } catch {
            print("reports: failed: \(error)")
        }
    }

    static func measure(_ db: PostgresConnection, visits: Int) throws {
        try PostgresMigrator(directory: schemaDirectory()).migrate(db)
        try loadSite(db)
        // The months of the data exist before it is loaded (schema 0011), as the aggregator's upkeep
        // makes them ahead in production: the rows go to their month, not to the default partitions.
        try db.query("SELECT waymark_prepare_history_partitions(to_timestamp($1)::date, to_timestamp($2)::date)",
                     [Double(start), Double(start + days * 86_400)])
        let journeys = visits / 7
        print("reports: loading \(visits) visits (\(journeys) journeys of 7 visits) over \(days) days, \(regionCount) regions")
        var t = clock()
        // Rows go in day by day, as the aggregator appends them in roughly time order, so a day's
        // rows share pages (the incremental refresh reads its day and week).
        let order = dayOrder(journeys), heardOrder = dayOrder(journeys + journeys / 3)
        var bulk = BenchBulkLoad()
        try bulk.dropIndexes(db, tables: ["journeys", "visits", "transitions", "entrance_heard"])
        try db.copy(into: "journeys", columns: ["site_id", "device_id", "started_at", "ended_at", "duration_s", "regions"]) { w in
            for j in order {
                let path = walk(j)
                try w.row([site, path.device, iso(path.visits[0].0), iso(path.visits[6].1), String(path.visits[6].1 - path.visits[0].0),
                           "{" + path.visits.map { "r\($0.2)" }.joined(separator: ",") + "}"])
            }
        }
        print(String(format: "  COPY journeys      %9.1f s", clock() - t)); t = clock()
        try db.copy(into: "visits", columns: ["site_id", "device_id", "region_id", "entered_at", "exited_at", "dwell_s", "inferred"]) { w in
            for j in order {
                let path = walk(j)
                for (i, v) in path.visits.enumerated() {
                    try w.row([site, path.device, "r\(v.2)", iso(v.0), iso(v.1), String(v.1 - v.0), i == 3 && j % 10 == 0 ? "t" : "f"])
                }
            }
        }
        print(String(format: "  COPY visits        %9.1f s", clock() - t)); t = clock()
        try db.copy(into: "transitions", columns: ["site_id", "device_id", "from_region", "to_region", "at", "inferred"]) { w in
            for j in order {
                let path = walk(j)
                for i in 1..<path.visits.count {
                    try w.row([site, path.device, "r\(path.visits[i - 1].2)", "r\(path.visits[i].2)", iso(path.visits[i].0),
                               i == 3 && j % 10 == 0 ? "t" : "f"])
                }
            }
        }
        print(String(format: "  COPY transitions   %9.1f s", clock() - t)); t = clock()
        try db.copy(into: "entrance_heard", columns: ["site_id", "region_id", "device_id", "hour", "first_heard_at", "last_heard_at"]) { w in
            for j in heardOrder {
                let path = walk(j)
                let device = j < journeys ? path.device : "mac:passer-\(j)"
                let at = path.visits[0].0
                try w.row([site, "r0", device, iso(at - at % 3600), iso(at), iso(at)])
            }
        }
        try loadGatewayHistory(db)
        print(String(format: "  COPY entrance/gw   %9.1f s", clock() - t)); t = clock()
        try bulk.rebuild(db)
        print(String(format: "  indexes, keys      %9.1f s  (dropped for the COPY, rebuilt)", clock() - t)); t = clock()
        try db.execute("VACUUM ANALYZE")
        print(String(format: "  VACUUM ANALYZE     %9.1f s", clock() - t)); t = clock()
        let runner = try ReportRunner(connection: db)
        let hours = try runner.refresh()
        print(String(format: "  full refresh       %9.1f s  (%d hours rebuilt)", clock() - t, hours))

        // Incremental: one more hour of visits, as the aggregator would commit them.
        let lastHour = start + days * 86_400 - 3600
        try db.copy(into: "visits", columns: ["site_id", "device_id", "region_id", "entered_at", "exited_at", "dwell_s"]) { w in
            for i in 0..<(visits / Int(days * 24)) {
                let at = lastHour + Int64(i % 3600)
                try w.row([site, "ibeacon:late:\(i)", "r\(i % regionCount)", iso(at), iso(at + 60), "60"])
            }
        }
        t = clock()
        let touched = try runner.refresh()
        print(String(format: "  incremental refresh %8.2f s  (%d visits entering in the last hour; %d hour(s) rebuilt, with their days and week)", clock() - t, visits / Int(days * 24), touched))
        try measureMiddleHour(db, runner, visits: visits)

        print("reports over \(days) days (best of 3; target < 2 s each):")
        let from = start, to = start + days * 86_400
        for kind in ReportKind.allCases where kind != .map {
            for period in kind.usesPeriod ? [ReportPeriod.day, .hour] : [.day] {
                var best = Double.infinity
                var rows = 0
                for _ in 0..<3 {
                    let t0 = clock()
                    rows = try runner.run(ReportRequest(kind: kind, from: from, to: to, period: period), site: site).rows.count
                    best = min(best, clock() - t0)
                }
                let name = kind.usesPeriod ? "\(kind.rawValue) by \(period.rawValue)" : kind.rawValue
                print("  " + name + String(repeating: " ", count: max(1, 24 - name.count)) + String(format: "%7.3f s  %7d rows  ", best, rows) + (best < 2 ? "ok" : "SLOW"))
            }
        }
    }

    /// Journey `j`: a device, and 7 visits (entered, exited, region index) walking the grid from an
    /// entrance (region 0 or 19), derived from `j` alone so every COPY pass sees the same data.
    /// 250,000 devices; device d makes journeys d, d + 250,000, … on different days.
    static func walk(_ j: Int) -> (device: String, visits: [(Int64, Int64, Int)]) {
        var rng = UInt64(truncatingIfNeeded: j) &* 0x9E37_79B9_7F4A_7C15 &+ 0x2545_F491_4F6C_DD1D
        func next(_ n: Int64) -> Int64 {
            rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17
            return Int64(rng % UInt64(n))
        }
        let day = dayOf(j)
        var t = start + day * 86_400 + 8 * 3600 + next(12 * 3600)
        let side = Int64(Self.side), count = Int64(regionCount)
        var region: Int64 = next(2) == 0 ? 0 : count - 1
        var visits: [(Int64, Int64, Int)] = []
        visits.reserveCapacity(7)
        for _ in 0..<7 {
            let dwell: Int64 = next(20) == 0 ? 3600 + next(20_000) : 20 + next(1500)
            visits.append((t, t + dwell, Int(region)))
            t += dwell + next(20)
            let (x, y) = (region % side, region / side)
            var moves: [Int64] = []
            if x > 0 { moves.append(region - 1) }
            if x < side - 1 { moves.append(region + 1) }
            if y > 0 { moves.append(region - side) }
            if y < count / side - 1 { moves.append(region + side) }
            region = moves[Int(next(Int64(moves.count)))]
        }
        return ("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:\(j % 250_000 / 1000):\(j % 1000)", visits)
    }

    /// The day (0..<days) of journey `j`: a device makes a journey every 5 days at most, so its
    /// rows never collide on a key.
    static func dayOf(_ j: Int) -> Int64 { (Int64(j % 250_000) * 7 + Int64(j / 250_000) * 5) % days }

    /// 0..<n ordered by day (stable within a day).
    static func dayOrder(_ n: Int) -> [Int] {
        var buckets = [[Int]](repeating: [], count: Int(days))
        for j in 0..<n { buckets[Int(dayOf(j))].append(j) }
        return buckets.flatMap { $0 }
    }

    static func loadSite(_ db: PostgresConnection) throws {
        try db.query("INSERT INTO sites (site_id) VALUES ($1)", [site])
        for r in 0..<regionCount {
            let (x, y) = (Double(r % side) * 10, Double(r / side) * 10)
            try db.query("INSERT INTO gateways (site_id, gateway_id, x_m, y_m) VALUES ($1, $2, $3, $4)", [site, "gw\(r)", x, y])
            try db.query("""
                INSERT INTO regions (site_id, region_id, name, x_m, y_m, radius_m, is_entrance, gateway_ids)
                VALUES ($1, $2, $3, $4, $5, 4, $6, $7)
                """, [site, "r\(r)", "Region \(r)", x, y, r == 0 || r == regionCount - 1, ["gw\(r)"]])
        }
    }

    static func loadGatewayHistory(_ db: PostgresConnection) throws {
        try db.copy(into: "gateway_status", columns: ["site_id", "gateway_id", "received_at", "state", "boot", "spool_depth", "spool_dropped"]) { w in
            for g in 0..<regionCount {
                for (i, at) in stride(from: start, to: start + days * 86_400, by: 300).enumerated() {
                    let online = (i + g) % 97 != 0
                    try w.row([site, "gw\(g)", iso(at + Int64(g)), online ? "online" : "offline", online ? "boot\(i / 1000)" : nil,
                               online ? String(i % 17) : nil, online ? String(i % 1000 / 100) : nil])
                }
            }
        }
        try db.copy(into: "gateway_ingest_hourly", columns: ["site_id", "gateway_id", "hour", "batches", "sightings", "last_batch_at"]) { w in
            for g in 0..<regionCount {
                for h in stride(from: start, to: start + days * 86_400, by: 3600) {
                    try w.row([site, "gw\(g)", iso(h), "3600", "72000", iso(h + 3599)])
                }
            }
        }
    }

    static func iso(_ t: Int64) -> String { ReportDate.iso(t) }

    static func clock() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func schemaDirectory() -> String {
        if let dir = ProcessInfo.processInfo.environment["WAYMARK_SCHEMA_DIR"], !dir.isEmpty { return dir }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("schema").path
    }
}
