import WaymarkPostgres
import WaymarkReports

/// The console's reads, on one PostgreSQL connection of its own thread (`PostgresWorker`), with
/// the reports' own query layer (`ReportRunner`) and bound parameters only.
public final class ConsoleDatabase: Sendable {
    private let worker: PostgresWorker

    public init(url: String) {
        worker = PostgresWorker(url: url, name: "waymark-console-db")
    }

    public var maskedURL: String { worker.maskedURL }

    /// Runs one table report, after bringing the rollups up to date.
    func report(_ request: ReportRequest, site: String) async throws -> ReportTable {
        try await worker.run { connection in
            let runner = try ReportRunner(connection: connection)
            try runner.refresh(site: site)
            return try runner.run(request, site: site)
        }
    }

    /// A device's visits that ended at or after `since` (Unix seconds), oldest first.
    func visits(site: String, device: String, since: Double) async throws -> [DevicesPage.Visit] {
        try await worker.run { connection in
            let result = try connection.query("""
                SELECT region_id,
                       to_char(entered_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                       to_char(exited_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                       dwell_s, inferred
                FROM visits
                WHERE site_id = $1 AND device_id = $2 AND exited_at >= to_timestamp($3::double precision)
                ORDER BY entered_at LIMIT 500
                """, [site, device, since])
            return try result.rows.map { row in
                DevicesPage.Visit(region: try row.string(0), enteredAt: try row.string(1), exitedAt: try row.string(2),
                                  dwellS: try row.double(3), inferred: try row.bool(4))
            }
        }
    }

    public func stop() { worker.shutdown() }
}
