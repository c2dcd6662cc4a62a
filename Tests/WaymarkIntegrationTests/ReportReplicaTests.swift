import Foundation
import Testing
import WaymarkConfig
import WaymarkPostgres

/// Reports from a streaming replica (docs/reports.md, "Reports from a replica"): a private primary
/// fed by the real aggregator, which keeps the rollups refreshed itself (`reports.refresh_interval_s`),
/// and a hot standby made from it with `pg_basebackup`, on another port. `waymark report` on the
/// standby must answer exactly as on the primary, without trying to refresh (a standby is
/// read-only), and say when hours are still waiting for the primary's refresh.
@Suite("Reports from a streaming replica", .enabled(if: AggregatorTestServices.shouldRun), .serialized)
struct ReportReplicaTests {
    @Test("the aggregator refreshes the rollups; a standby answers every report as the primary does")
    func reportsFromAStandby() throws {
        let mqtt = try AggregatorTestServices.requireMQTT()
        let primary = try AggregatorPrivateCluster()
        defer { primary.destroy() }
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(try PostgresConnection(url: primary.url))

        let siteID = "replica-\(UInt32.random(in: 0...UInt32.max))"
        let sitePath = try aggregatorTempFile("site.yaml", AggregatorTestVenue.yaml(site: siteID, count: 4))
        let site = try SiteLoader.load(path: sitePath).site
        var config = AggregatorTestRun.config(site: sitePath, mqtt: mqtt, database: primary.url, clientID: "agg-\(siteID)")
        config.reportRefreshIntervalS = 1
        let run = AggregatorTestRun(config: config, site: site)
        #expect(run.waitUntilReady())
        let dir = URL(fileURLWithPath: sitePath).deletingLastPathComponent().path
        let waymark = try DemoTests.binary("waymark", repo: DeployEnvironment.repositoryRoot)
        let start = Int(Date().timeIntervalSince1970) - 900
        let sim = try AggregatorProcesses.run([
            waymark, "simulate", "--site", sitePath, "--devices", "12", "--duration", "10m", "--seed", "7",
            "--start", String(start), "--quiet", "--publish", mqtt, "--speedup", "0", "--sightings", dir + "/s.jsonl",
            "--ack-wait", "90",
        ])
        #expect(sim.status == 0, "waymark simulate --publish failed:\n\(sim.output)")

        // Every batch is committed (acked); the aggregator's own refresh then empties the dirty
        // hours within its 1-s interval — nobody else refreshes here.
        let db = try PostgresConnection(url: primary.url)
        defer { db.close() }
        func count(_ sql: String, on c: PostgresConnection) throws -> Int { try c.query(sql, [siteID]).first?.int(0) ?? -1 }
        let visits = try count("SELECT count(*)::int8 FROM visits WHERE site_id = $1", on: db)
        #expect(visits > 0)
        var dirty = -1
        for _ in 0..<100 {
            dirty = try count("SELECT count(*)::int8 FROM report_dirty_hours WHERE site_id = $1", on: db)
            if dirty == 0 { break }
            Thread.sleep(forTimeInterval: 0.2)
        }
        #expect(dirty == 0, "the aggregator did not refresh the rollups (reports.refresh_interval_s = 1)")
        #expect(run.stop())

        // The standby: a base backup of the primary, streaming from it.
        let standby = try StandbyCluster(primary: primary)
        defer { standby.destroy() }
        let replica = try PostgresConnection(url: standby.url)
        defer { replica.close() }
        #expect(try replica.query("SELECT pg_is_in_recovery()").first?.bool(0) == true)
        // A change on the primary that no refresh has seen yet: one more dirty hour.
        try db.execute("INSERT INTO report_dirty_hours VALUES ('\(siteID)', date_trunc('hour', now()))")
        var replayed = false
        for _ in 0..<100 {
            if try count("SELECT count(*)::int8 FROM report_dirty_hours WHERE site_id = $1", on: replica) == 1 { replayed = true; break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        try #require(replayed, "the standby did not replay the primary's change")

        let from = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(start - 3600)))
        let to = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(start + 3 * 3600)))
        for report in ["traffic", "dwell", "occupancy", "transitions"] {
            let common = [waymark, "report", report, "--site-id", siteID, "--from", from, "--to", to, "--format", "csv"]
            let onPrimary = try AggregatorProcesses.run(common + ["--database", primary.url, "--no-refresh"])
            let onStandby = try AggregatorProcesses.run(common + ["--database", standby.url])
            #expect(onPrimary.status == 0, "\(onPrimary.output)")
            #expect(onStandby.status == 0, "waymark report \(report) on the standby failed:\n\(onStandby.output)")
            // Output goes through one file (stdout and stderr): the standby's adds its note first.
            let note = onStandby.output.split(separator: "\n").first.map(String.init) ?? ""
            #expect(note.contains("reading a standby") && note.contains("1 hour(s)"), "\(onStandby.output)")
            #expect(onStandby.output.split(separator: "\n").dropFirst().joined(separator: "\n")
                        == onPrimary.output.split(separator: "\n").joined(separator: "\n"),
                    "\(report) differs:\nprimary:\n\(onPrimary.output)\nstandby:\n\(onStandby.output)")
            #expect(onPrimary.output.split(separator: "\n").count > 1, "\(report) has no rows:\n\(onPrimary.output)")
        }
    }
}

/// A hot standby of an `AggregatorPrivateCluster`: `pg_basebackup -R` (streaming, with the
/// replication settings written for it) into a directory of its own, started on another port.
final class StandbyCluster {
    let dir: String
    let port: Int
    let bin: String
    var url: String { "postgresql://postgres@127.0.0.1:\(port)/postgres" }

    init(primary: AggregatorPrivateCluster) throws {
        bin = primary.bin
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-standby-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        if getuid() == 0 { try AggregatorProcesses.run(["chown", "postgres", dir]) }
        port = try LocalPort.free()
        let backup = try AggregatorProcesses.run(["\(bin)/pg_basebackup", "-h", "127.0.0.1", "-p", String(primary.port), "-U", "postgres",
                                                  "-D", "\(dir)/data", "-R", "-X", "stream", "--no-sync"], asPostgres: true)
        try #require(backup.status == 0, "pg_basebackup failed: \(backup.output)")
        let started = try AggregatorProcesses.run(["\(bin)/pg_ctl", "-D", "\(dir)/data", "-l", "\(dir)/postgres.log", "-w", "-t", "60",
                                                   "-o", "-p \(port) -k \(dir) -c listen_addresses=127.0.0.1 -c hot_standby=on", "start"],
                                                  asPostgres: true)
        try #require(started.status == 0, "the standby did not start: \(started.output)")
    }

    func destroy() {
        _ = try? AggregatorProcesses.run(["\(bin)/pg_ctl", "-D", "\(dir)/data", "-m", "immediate", "-w", "stop"], asPostgres: true)
        try? FileManager.default.removeItem(atPath: dir)
    }
}
