import Foundation
import WaymarkPostgres

/// The end of the demo: what the aggregator stored, read back from PostgreSQL as `waymark
/// evaluate` input, then the reports, the accuracy and the map, each by running this same
/// `waymark` program's subcommands, exactly as a user would.
struct DemoResults {
    let waymark: String
    let sitePath: String
    let siteID: String
    let databaseURL: String
    let work: String

    struct Stored {
        var locations = 0
        var visits = 0
        var journeys = 0
        var devices = 0
    }

    /// Writes the stored current-region changes (`region_events` of kind `region_change`) and
    /// visits as `location` and `visit` lines, the form `waymark evaluate --output` reads.
    func exportStored(to path: String) throws -> Stored {
        let db: PostgresConnection
        do { db = try PostgresConnection(url: databaseURL) } catch {
            throw DemoError("cannot read the results from PostgreSQL: \(error)")
        }
        defer { db.close() }
        var stored = Stored()
        var out = ""
        do {
            let locations = try db.query("""
                SELECT device_id, extract(epoch FROM at)::float8, region_id FROM region_events
                WHERE site_id = $1 AND kind = 'region_change' ORDER BY device_id, at, seq
                """, [siteID])
            for row in locations.rows {
                let region = row.text(2).map { "\"\(Self.escape($0))\"" } ?? "null"
                out += #"{"type":"location","t":\#(try row.double(1)),"device":"\#(Self.escape(try row.string(0)))","region":\#(region)}"# + "\n"
                stored.locations += 1
            }
            let visits = try db.query("""
                SELECT device_id, region_id, extract(epoch FROM entered_at)::float8, extract(epoch FROM exited_at)::float8, inferred
                FROM visits WHERE site_id = $1 ORDER BY device_id, entered_at
                """, [siteID])
            for row in visits.rows {
                out += #"{"type":"visit","device":"\#(Self.escape(try row.string(0)))","region":"\#(Self.escape(try row.string(1)))","entered":\#(try row.double(2)),"exited":\#(try row.double(3)),"inferred":\#(try row.bool(4))}"# + "\n"
                stored.visits += 1
            }
            stored.journeys = try db.query("SELECT count(*)::int8 FROM journeys WHERE site_id = $1", [siteID]).first?.int(0) ?? 0
            stored.devices = try db.query("SELECT count(*)::int8 FROM devices WHERE site_id = $1", [siteID]).first?.int(0) ?? 0
        } catch {
            throw DemoError("cannot read the results from PostgreSQL: \(error)")
        }
        do { try out.write(toFile: path, atomically: true, encoding: .utf8) } catch {
            throw DemoError("cannot write \(path): \(error.localizedDescription)")
        }
        return stored
    }

    /// Notifications stored, per rule.
    struct NotificationCount {
        var sent = 0, devices = 0, published = 0, webhookDelivered = 0
    }

    /// What the rules sent (the `notifications` table), per rule id.
    func notificationCounts() throws -> [String: NotificationCount] {
        do {
            let db = try PostgresConnection(url: databaseURL)
            defer { db.close() }
            var out: [String: NotificationCount] = [:]
            for r in try db.query("""
                SELECT rule_id, count(*)::int8, count(DISTINCT device_id)::int8, count(mqtt_published_at)::int8,
                       count(*) FILTER (WHERE webhook_status = 'delivered')::int8
                FROM notifications WHERE site_id = $1 GROUP BY rule_id
                """, [siteID]).rows {
                out[try r.string(0)] = .init(sent: try r.int(1), devices: try r.int(2), published: try r.int(3), webhookDelivered: try r.int(4))
            }
            return out
        } catch {
            throw DemoError("cannot read the notifications: \(error)")
        }
    }

    /// The most common sub-paths of 3 and 4 regions (`waymark_report_paths`, kind subpath) as
    /// text lines; whole journeys are left to `waymark report paths`, they are long.
    func topSubpaths(from: String, to: String, limit: Int) throws -> [String] {
        do {
            let db = try PostgresConnection(url: databaseURL)
            defer { db.close() }
            let rows = try db.query("""
                SELECT length, rank::int8, path, occurrences::int8, share FROM waymark_report_paths($1, $2::timestamptz, $3::timestamptz, NULL, 'day', $4)
                WHERE kind = 'subpath' AND length >= 3 ORDER BY length, rank
                """, [siteID, from, to, limit])
            return try rows.rows.map { r in
                String(format: "%d regions  #%d  %5d×  %4.1f %%  ", try r.int(0), try r.int(1), try r.int(3), try r.double(4) * 100) + (try r.string(2))
            }
        } catch {
            throw DemoError("cannot read the top paths: \(error)")
        }
    }

    /// Visits of the site already in the database (nil when it cannot be read).
    func storedVisits() throws -> Int? {
        let db: PostgresConnection
        do { db = try PostgresConnection(url: databaseURL) } catch {
            throw DemoError("cannot connect to PostgreSQL: \(error)")
        }
        defer { db.close() }
        return Self.visitCount(db, site: siteID)
    }

    /// Visits stored so far (for the progress line); nil when the database cannot be read.
    static func visitCount(_ db: PostgresConnection, site: String) -> Int? {
        try? db.query("SELECT count(*)::int8 FROM visits WHERE site_id = $1", [site]).first?.int(0)
    }

    /// Runs `waymark ARGUMENTS…` with its output on ours; true when it succeeded.
    func run(_ arguments: [String], quiet: Bool = false, silent: Bool = false) -> Bool {
        fflush(nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: waymark)
        process.arguments = arguments
        if quiet || silent { process.standardError = FileHandle(forWritingAtPath: "/dev/null") }
        if silent { process.standardOutput = FileHandle(forWritingAtPath: "/dev/null") }
        do { try process.run() } catch { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// The report range: whole UTC hours around the simulated period.
    static func range(start: Double, end: Double) -> (from: String, to: String) {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        let from = (start / 3600).rounded(.down) * 3600
        let to = (end / 3600).rounded(.up) * 3600
        return (formatter.string(from: Date(timeIntervalSince1970: from)),
                formatter.string(from: Date(timeIntervalSince1970: max(to, from + 3600))))
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where c.value < 0x20: out += String(format: "\\u%04x", c.value)
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
