import Foundation
import Testing
import WaymarkConfig
import WaymarkCore
import WaymarkPostgres

/// Debian's Chromium, when installed.
enum ConsoleBrowser {
    static var chromium: String? {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// `waymark serve` in headless Chromium (issue 17), against the real broker, aggregator and
/// database: the live map shows every region of the example museum, a region's "N inside" count
/// changes in the open page after batches go through the broker and the aggregator, a report
/// renders and its CSV downloads, and the screenshots are not blank.
/// The browser is driven over the DevTools protocol by tests/console/browser_check.py.
@Suite("Console in a browser", .serialized,
       .enabled(if: AggregatorTestServices.shouldRun && ConsoleBrowser.chromium != nil,
                "needs Debian's chromium (scripts/setup.sh installs it) and the test broker and database (scripts/test.sh)"))
struct ConsoleBrowserTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let museum = repository.appendingPathComponent("deploy/examples/museum.yaml").path
    static let trackedUUID = "F7826DA6-4FA2-4E98-8024-BC5B71E0893E"

    /// `url` signed in as `user` instead of its own user.
    static func url(_ url: String, user: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        if let at = rest.firstIndex(of: "@"), !rest[..<at].contains("/") {
            return String(url[..<scheme.upperBound]) + user + String(rest[at...])
        }
        return String(url[..<scheme.upperBound]) + user + "@" + rest
    }

    /// Waits for `pattern`'s first group in the file at `path`.
    static func waitFor(_ pattern: String, in path: String, timeout: Double, while process: AggregatorChild) throws -> String {
        let regex = try NSRegularExpression(pattern: pattern)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            if let m = regex.firstMatch(in: text, range: NSRange(location: 0, length: (text as NSString).length)) {
                return (text as NSString).substring(with: m.range(at: 1))
            }
            try #require(process.isRunning, "exited early:\n\(text)")
            Thread.sleep(forTimeInterval: 0.2)
        }
        throw RawFailure("'\(pattern)' did not appear in \(path) within \(timeout) s")
    }

    struct RawFailure: Error, CustomStringConvertible { var description: String; init(_ d: String) { description = d } }

    /// Two devices walking entrance → lobby → ground corridor, 15 s each, heard every second by
    /// the region's gateway (strong) and the next one along (weak).
    static func batches(start: Double, boot: String) -> [SightingBatch] {
        let gateways = ["gw-entrance-main", "gw-lobby", "gw-corridor-0-1"]
        var seq: [String: UInt64] = [:]
        var out: [SightingBatch] = []
        for second in 0..<45 {
            let t = start + Double(second)
            let here = second / 15
            for (g, gateway) in gateways.enumerated() where abs(g - here) <= 1 {
                let entries = (0..<2).map { n in
                    let rssi = g == here ? -50.0 - Double(n) : -86.0
                    return SightingBatch.Entry(device: .ibeacon(uuid: BeaconUUID(trackedUUID)!, major: 9, minor: UInt16(n)), count: 1,
                                               rssiMax: rssi, rssiMean: rssi, rssiLast: rssi, tx: -59, first: t + 0.1, last: t + 0.1)
                }
                let s = (seq[gateway] ?? 0) + 1
                seq[gateway] = s
                out.append(SightingBatch(gateway: gateway, boot: boot, seq: s, start: t, end: t + 1, sightings: entries))
            }
        }
        return out
    }

    @Test func mapUpdatesLiveReportRendersCSVDownloadsScreenshotsAreNotBlank() throws {
        let chromium = try #require(ConsoleBrowser.chromium)
        let mqtt = try AggregatorTestServices.requireMQTT()
        let db = try PostgresTestDatabase("console")
        defer { db.drop() }
        let admin = try db.connect()
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(admin)
        let reader = "wm_console_\(UInt32.random(in: 0...UInt32.max))"
        try admin.execute("CREATE ROLE \(reader) LOGIN IN ROLE waymark_report")
        defer { try? admin.execute("DROP OWNED BY \(reader); DROP ROLE IF EXISTS \(reader)") }

        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-console-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { if ProcessInfo.processInfo.environment["WAYMARK_KEEP_CONSOLE"] == nil { try? FileManager.default.removeItem(at: dir) } }
        let prefix = "waymark-test/console-\(UInt32.random(in: 0...UInt32.max))"
        let aggregatorLog = dir.appendingPathComponent("aggregator.log").path
        let aggregator = try AggregatorProcesses.launchAggregator(
            ["--site", Self.museum, "--broker", mqtt, "--database", db.url, "--metrics-port", "0",
             "--set", "topic_prefix=\(prefix)", "--set", "mqtt.client_id=agg-console-\(UInt32.random(in: 0...UInt32.max))",
             "--set", "database.flush_interval_ms=100", "--set", "clock.tolerance_s=1000000000", "--set", "clock.max_age_s=10000000000",
             "--set", "log.level=info"], log: aggregatorLog)
        defer { if aggregator.isRunning { aggregator.signal(SIGKILL); aggregator.wait() } }
        _ = try Self.waitFor("(connected to the broker)", in: aggregatorLog, timeout: 60, while: aggregator)

        let token = "console-test-\(UUID().uuidString)"
        let digest = try #require(try AggregatorProcesses.run(["/bin/sh", "-c", "printf %s '\(token)' | sha256sum"]).output.split(separator: " ").first)
        let waymark = URL(fileURLWithPath: try AggregatorProcesses.aggregatorBinary()).deletingLastPathComponent().appendingPathComponent("waymark").path
        let consoleLog = dir.appendingPathComponent("console.log").path
        let console = try AggregatorChild.spawn(
            [waymark, "serve", "--site", Self.museum, "--database", Self.url(db.url, user: reader), "--broker", mqtt, "--port", "0",
             "--set", "topic_prefix=\(prefix)", "--set", "auth.tokens=sha256:\(digest)", "--set", "log.level=info"], output: consoleLog)
        defer { if console.isRunning { console.signal(SIGKILL); console.wait() } }
        let port = try Self.waitFor(#"console at http://127\.0\.0\.1:([0-9]+)/"#, in: consoleLog, timeout: 60, while: console)

        let today = String(ISO8601DateFormatter().string(from: Date()).prefix(10))
        let ready = dir.appendingPathComponent("ready").path
        let driverLog = dir.appendingPathComponent("browser.json").path
        let driver = try AggregatorChild.spawn(
            ["python3", Self.repository.appendingPathComponent("tests/console/browser_check.py").path, "--chromium", chromium,
             "--base", "http://127.0.0.1:\(port)", "--token", token, "--out", dir.path, "--ready-file", ready, "--wait", "120",
             "--report", "name=traffic&from=\(today)&to=\(today)&by=hour"], output: driverLog)
        defer { if driver.isRunning { driver.signal(SIGKILL); driver.wait() } }
        let readyBy = Date().addingTimeInterval(90)
        while !FileManager.default.fileExists(atPath: ready) && driver.isRunning && Date() < readyBy { Thread.sleep(forTimeInterval: 0.2) }
        try #require(FileManager.default.fileExists(atPath: ready), "the browser did not open the map: \((try? String(contentsOfFile: driverLog, encoding: .utf8)) ?? "")")

        // Gateways report in, then two devices walk through the museum's ground floor.
        let fleet = try AggregatorTestFleet(url: mqtt, topics: Topics(prefix: prefix), name: "console-fleet")
        defer { fleet.close() }
        let now = Date().timeIntervalSince1970
        for gw in ["gw-entrance-main", "gw-lobby", "gw-corridor-0-1"] {
            let status = #"{"state":"online","gateway":"\#(gw)","version":"test","boot":"boot-c","spool_depth":0,"spool_dropped":0,"scan":"ok","t":\#(now - 50)}"#
            _ = try fleet.client.publish(topic: "\(prefix)/gateways/\(gw)/status", payload: Array(status.utf8), qos: 1, retain: false)
        }
        for batch in Self.batches(start: now - 46, boot: "boot-c") { try fleet.publish(batch) }
        #expect(try fleet.waitUntilAllAcked(timeout: 60), "the aggregator stored every batch")

        let exitBy = Date().addingTimeInterval(180)
        while driver.isRunning && Date() < exitBy { Thread.sleep(forTimeInterval: 0.3) }
        let output = (try? String(contentsOfFile: driverLog, encoding: .utf8)) ?? ""
        let line = try #require(output.split(separator: "\n").last { $0.hasPrefix("{") }, "no result from the browser driver:\n\(output)")
        let seen = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(seen["error"] == nil, "browser: \(seen["error"] ?? "")\nconsole log:\n\((try? String(contentsOfFile: consoleLog, encoding: .utf8)) ?? "")")

        // Every region of the museum is on the map, with its count.
        let site = try SiteLoader.load(path: Self.museum).site
        #expect(Set(seen["regions"] as? [String] ?? []) == Set(site.regions.map(\.id)), "regions drawn")
        #expect((seen["counts_before"] as? [String: String])?.count == site.regions.count, "a count per region")
        // A count changed in the open page (server-sent events), upwards from what it was.
        let changed = seen["counts_changed"] as? [String: [String?]] ?? [:]
        #expect(!changed.isEmpty, "no region's count changed in the page within 120 s")
        #expect(changed.values.contains { ($0.last ?? nil).flatMap { Int($0.split(separator: " ").first ?? "") }.map { $0 >= 1 } ?? false },
                "a region counts a device inside: \(changed)")
        let states = seen["gateway_states"] as? [String: String] ?? [:]
        #expect(states["gw-lobby"] == "online", "gateway health on the map: \(states)")

        // Devices: both found by a search, one opened with its live state and today's path on the map.
        let devices = seen["devices_rows"] as? [[String]] ?? []
        #expect(devices.count == 2, "devices found: \(devices)")
        #expect((seen["device_state"] as? [[String]])?.count == 1, "the device's live state")
        #expect((seen["device_on_path"] as? Int ?? 0) >= 1, "today's path outlined on the map")
        // Gateways: live status and today's health report (read through the read-only login).
        #expect(seen["gateways_error"] == nil || seen["gateways_error"] is NSNull, "\(seen["gateways_error"] ?? "")")
        let lobby = (seen["gateways_rows"] as? [[String]] ?? []).first { $0.first == "gw-lobby" } ?? []
        #expect(lobby.count == 10 && lobby[2] == "online" && (Int(lobby[7]) ?? 0) >= 1, "gw-lobby on the gateways page: \(lobby)")
        // The running aggregator's retained status: online, owning the whole (unsharded) site.
        let aggregators = seen["aggregators_rows"] as? [[String]] ?? []
        #expect(aggregators.count == 1 && aggregators.first?.prefix(3) == ["aggregator/status", "online", "all"], "\(aggregators)")
        #expect(seen["shard_coverage"] as? String == "The whole site has one running aggregator.", "\(seen["shard_coverage"] ?? "nil")")

        // The report renders, and its CSV is the same table.
        #expect((seen["report_title"] as? String)?.hasPrefix("traffic") == true, "report: \(seen["report_title"] ?? "nil") \(seen["report_error"] ?? "")")
        let columns = seen["report_columns"] as? [String] ?? []
        #expect(columns == ["period_start", "region_id", "region_name", "visits", "devices", "inferred_visits"])
        let csv = seen["csv"] as? [String: Any] ?? [:]
        #expect(csv["status"] as? Int == 200)
        #expect((csv["disposition"] as? String)?.hasPrefix("attachment") == true, "\(csv)")
        let csvLines = seen["csv_lines"] as? [String] ?? []
        #expect(csvLines.first == columns.joined(separator: ","), "CSV header")
        #expect(csvLines.count - 1 == (seen["report_rows"] as? [Any])?.count, "CSV rows = table rows")
        #expect((seen["report_chart_bars"] as? Int ?? 0) > 0, "the report draws its chart: \(seen["report_chart_bars"] ?? "nil")")

        // Screenshots are PNGs with something drawn.
        let shots = seen["screenshots"] as? [String: [String: Any]] ?? [:]
        #expect(shots.count == 5)
        for (name, stats) in shots {
            let colours = stats["colours"] as? Int ?? 0, sd = stats["luminance_sd"] as? Double ?? 0
            #expect(colours >= 8 && sd > 2, "\(name) looks blank: \(stats)")
        }
        if let keep = ProcessInfo.processInfo.environment["WAYMARK_KEEP_SCREENSHOTS"] {
            for name in ["map-before.png", "map-after.png", "report.png", "device.png", "gateways.png"] {
                try? FileManager.default.removeItem(atPath: "\(keep)/console-\(name)")
                try? FileManager.default.copyItem(atPath: dir.appendingPathComponent(name).path, toPath: "\(keep)/console-\(name)")
            }
        }

        // No device id in the console's log at info.
        let log = (try? String(contentsOfFile: consoleLog, encoding: .utf8)) ?? ""
        #expect(!log.lowercased().contains(Self.trackedUUID.lowercased()), "a device id in the console log")
        console.signal(SIGTERM)
        #expect(console.wait() == 0, "the console stops cleanly on SIGTERM:\n\(log)")
        aggregator.signal(SIGTERM)
        aggregator.wait()
    }
}
