import WaymarkCore
import WaymarkPostgres

/// Runs reports against a Waymark database: refreshes the rollups, resolves the site, calls the
/// report function with bound parameters and types the rows. One runner uses one connection from
/// one thread (it is not `Sendable`, like the connection).
public struct ReportRunner {
    public let connection: PostgresConnection

    /// Prepares the session: UTC and ISO dates, so timestamps read back the same everywhere.
    public init(connection: PostgresConnection) throws(ReportError) {
        self.connection = connection
        try database("set up the session") { try connection.execute("SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'") }
    }

    /// Brings the rollups up to date (`waymark_report_refresh`) and returns how many hours it rebuilt.
    @discardableResult
    public func refresh(site: String? = nil) throws(ReportError) -> Int {
        try database("refresh the report rollups") {
            let result = try connection.query("SELECT waymark_report_refresh($1::text)", [site])
            return try result.first?.int(0) ?? 0
        }
    }

    /// Whether the server is a standby (a streaming replica, read-only): the rollups cannot be
    /// refreshed there, they are as fresh as the primary's last refresh.
    public func isStandby() throws(ReportError) -> Bool {
        try database("ask whether the server is a standby") {
            try connection.query("SELECT pg_is_in_recovery()").first?.bool(0) ?? false
        }
    }

    /// Hours whose rows changed since the last refresh (what a refresh would rebuild), for `site`
    /// or every site, with the oldest of them.
    public func pendingHours(site: String?) throws(ReportError) -> (count: Int, oldest: String?) {
        try database("count the hours waiting for a refresh") {
            let row = try connection.query("""
                SELECT count(*)::int8, to_char(min(hour) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":00Z"')
                FROM report_dirty_hours WHERE $1::text IS NULL OR site_id = $1
                """, [site]).first
            return (try row?.int(0) ?? 0, row?.text(1))
        }
    }

    /// The site ids in the database.
    public func sites() throws(ReportError) -> [String] {
        try database("list the sites") {
            try connection.query("SELECT site_id FROM sites ORDER BY site_id").rows.map { try $0.string(0) }
        }
    }

    /// `explicit` when given; otherwise the database's only site, or an error that lists them.
    public func resolveSite(_ explicit: String?) throws(ReportError) -> String {
        if let explicit { return explicit }
        let all = try sites()
        switch all.count {
        case 1: return all[0]
        case 0: throw ReportError(.badArgument, "the database has no sites yet; run the aggregator (or `waymark demo`) first, or point --database at another database")
        default: throw ReportError(.badArgument, "the database holds several sites (\(all.joined(separator: ", "))); choose one with --site SITE.yaml or --site-id ID")
        }
    }

    /// Runs one report for `site` and returns its typed rows.
    public func run(_ request: ReportRequest, site: String) throws(ReportError) -> ReportTable {
        guard let sql = request.kind.statement else {
            throw ReportError(.badArgument, "'\(request.kind.rawValue)' is not a table report; use `waymark report map --svg FILE`")
        }
        if request.region != nil && !request.kind.acceptsRegion {
            throw ReportError(.badArgument, "the \(request.kind.rawValue) report is site-wide; omit --region")
        }
        var parameters: [(any PostgresEncodable)?] = [
            site, ReportDate.iso(request.from), ReportDate.iso(request.to), request.region, request.period.rawValue,
        ]
        if request.kind == .paths { parameters.append(request.limit) }
        let result = try database("run the \(request.kind.rawValue) report") { try connection.query(sql, parameters) }

        let expected = request.kind.columns
        guard result.columns == expected.map(\.name) else {
            throw ReportError(.schema, "the \(request.kind.rawValue) report returned columns \(result.columns.joined(separator: ", ")) but this program expects \(expected.map(\.name).joined(separator: ", ")); run `waymark db migrate` with the schema of this version")
        }
        var rows: [[ReportValue]] = []
        rows.reserveCapacity(result.count)
        for row in result.rows {
            var cells: [ReportValue] = []
            for (i, column) in expected.enumerated() {
                cells.append(try ReportValue.fromPostgres(row.text(i), kind: column.kind, column: column.name))
            }
            rows.append(cells)
        }
        return ReportTable(title: title(request, site: site), columns: expected, rows: rows)
    }

    /// The figures of the venue map: visits per region and transitions per region pair over the range.
    public func mapData(_ request: ReportRequest, site: Site) throws(ReportError) -> VenueMapData {
        var traffic = request
        traffic.kind = .traffic
        traffic.period = .hour
        traffic.region = nil
        var moves = traffic
        moves.kind = .transitions
        let visitsTable = try run(traffic, site: site.id)
        let transitionsTable = try run(moves, site: site.id)
        var visits: [String: Int64] = [:]
        for row in visitsTable.rows {
            if let id = row[1].textValue, let n = row[3].integerValue { visits[id, default: 0] += n }
        }
        let pairs = transitionsTable.rows.compactMap { row -> (from: String, to: String, count: Int64)? in
            guard let a = row[0].textValue, let b = row[1].textValue, let n = row[2].integerValue else { return nil }
            return (a, b, n)
        }
        return VenueMapData(site: site, period: request.rangeDescription, visits: visits, transitions: pairs)
    }

    func title(_ request: ReportRequest, site: String) -> String {
        var t = "\(request.kind.rawValue) — site \(site), \(request.rangeDescription)"
        if request.kind.usesPeriod { t += ", by \(request.period.rawValue) (UTC)" }
        if let region = request.region { t += ", region \(region)" }
        return t
    }

    /// Runs `body`, turning a PostgreSQL failure into a `ReportError` that keeps its message and hint.
    func database<T>(_ what: String, _ body: () throws -> T) throws(ReportError) -> T {
        do {
            return try body()
        } catch let error as PostgresError where error.sqlState == "22023" {
            // The report functions' argument checks (unknown site, region or period): the user's to fix.
            throw ReportError(.badArgument, "\(error.message); \(error.hint ?? "")")
        } catch let error as PostgresError {
            throw ReportError(.database, "cannot \(what): \(error)")
        } catch let error as ReportError {
            throw error
        } catch {
            throw ReportError(.database, "cannot \(what): \(error)")
        }
    }
}
