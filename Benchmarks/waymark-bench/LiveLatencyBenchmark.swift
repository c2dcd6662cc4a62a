import Foundation
import WaymarkAggregator
import WaymarkConfig
import WaymarkCore
import WaymarkHTTP
import WaymarkPostgres

/// `waymark-bench live-latency [DEVICES] [SECONDS]`: how long after its evidence a change of a
/// device's live region reaches the broker, end to end at real time. The example museum's gateways
/// are played by `waymark simulate --publish --speedup 1` (one batch per gateway per 1-s window,
/// stamped with the wall clock, as `waymark-edge` sends them), into an in-process
/// `AggregatorService` with its default settings (reorder window, publication interval) and a
/// private PostgreSQL database. The figures are the aggregator's own histogram
/// `waymark_aggregator_live_region_delay_seconds`: wall-clock time from the end of the second of
/// evidence that changed a live region (the tracker's filter decided on it then) to the
/// publication of the device's state. It includes the edge's window, the wait for the next
/// second's evidence that closes a second, the event-time reorder stage and the state's
/// publication interval; not the smoothing lag, which only the recorded history waits for.
/// Needs WAYMARK_MQTT_URL and WAYMARK_DATABASE_URL (`scripts/bench.sh live-latency` starts both)
/// and the release `waymark` beside this program.
enum LiveLatencyBenchmark {
    static func run() {
        let env = ProcessInfo.processInfo.environment
        guard let mqtt = env["WAYMARK_MQTT_URL"], let dbURL = env["WAYMARK_DATABASE_URL"] else {
            print("live-latency: needs WAYMARK_MQTT_URL and WAYMARK_DATABASE_URL: run it as `scripts/bench.sh live-latency`, which starts a private Mosquitto and PostgreSQL")
            return
        }
        let args = CommandLine.arguments
        let devices = args.count > 2 ? Int(args[2]) ?? 100 : 100
        let seconds = args.count > 3 ? Int(args[3]) ?? 120 : 120
        do { try measure(mqtt: mqtt, dbURL: dbURL, devices: devices, seconds: seconds) } catch { print("live-latency: failed: \(error)") }
    }

    static func measure(mqtt: String, dbURL: String, devices: Int, seconds: Int) throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let waymark = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("waymark").path
        guard FileManager.default.isExecutableFile(atPath: waymark) else {
            print("live-latency: \(waymark) is missing: build it with `swift build -c release --product waymark` (scripts/bench.sh does)")
            return
        }
        let database = "waymark_bench_live_\(getpid())"
        let admin = try PostgresConnection(url: dbURL)
        try admin.execute("CREATE DATABASE \(database)")
        defer { try? admin.execute("DROP DATABASE IF EXISTS \(database) WITH (FORCE)") }
        let url = PostgresURL.withDatabase(dbURL, database)
        try PostgresMigrator(directory: repository.appendingPathComponent("schema").path).migrate(try PostgresConnection(url: url))

        // The example museum under a site id of its own.
        let siteID = "live-\(getpid())"
        let example = try String(contentsOf: repository.appendingPathComponent("deploy/examples/museum.yaml"), encoding: .utf8)
        let sitePath = FileManager.default.temporaryDirectory.appendingPathComponent("\(siteID).yaml").path
        try example.replacingOccurrences(of: #"(?m)^site: .*$"#, with: "site: \(siteID)", options: .regularExpression)
            .write(toFile: sitePath, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: sitePath) }
        let site = try SiteLoader.load(path: sitePath).site

        var config = AggregatorConfig(sitePath: sitePath)
        config.mqtt.url = mqtt
        config.databaseURL = url
        config.metricsPort = 0
        // To measure another setting than the default (not to tune on this run).
        if let ms = Int(ProcessInfo.processInfo.environment["WAYMARK_BENCH_PUBLISH_MS"] ?? "") { config.publishIntervalMS = ms }
        if let s = Double(ProcessInfo.processInfo.environment["WAYMARK_BENCH_REORDER_S"] ?? "") { config.reorderWindowS = s }
        let service = AggregatorService(config: config, site: site)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            try? service.run()
            done.signal()
        }
        thread.start()
        while !service.isConnectedToBroker { Thread.sleep(forTimeInterval: 0.05) }
        let emptyWindows = ProcessInfo.processInfo.environment["WAYMARK_BENCH_EMPTY_WINDOWS"] != "0"
        print("live-latency: \(devices) devices walking the example museum (\(site.gateways.count) gateways) for \(seconds) s at real time; "
              + "gateways send \(emptyWindows ? "every window, empty ones too" : "only windows with sightings"); "
              + "aggregator: publish interval \(config.publishIntervalMS) ms, reorder window \(config.reorderWindowS) s")

        let simulate = Process()
        simulate.executableURL = URL(fileURLWithPath: waymark)
        simulate.arguments = ["simulate", "--site", sitePath, "--devices", String(devices), "--duration", "\(seconds)s", "--seed", "1",
                              "--arrivals", "start", "--publish", mqtt, "--speedup", "1", "--ack-wait", "30", "--quiet"]
            // As waymark-edge on a live radio: every window, empty ones too (WAYMARK_BENCH_EMPTY_WINDOWS=0: only windows
            // with sightings, as before 2026-11-27).
            + (emptyWindows ? ["--empty-windows"] : [])
        try simulate.run()
        simulate.waitUntilExit()
        Thread.sleep(forTimeInterval: 2)
        let metrics = String(decoding: service.metricsText(), as: UTF8.self)
        service.stop()
        done.wait()
        guard simulate.terminationStatus == 0 else {
            print("live-latency: waymark simulate failed with status \(simulate.terminationStatus)")
            return
        }
        guard let h = PrometheusHistogram(metrics, name: "waymark_aggregator_live_region_delay_seconds"), h.count > 0 else {
            print("live-latency: no live-region changes were published")
            return
        }
        print(String(format: "live-latency: %d live-region changes published; mean %.2f s after their evidence; p50 %@, p95 %@, p99 %@",
                     h.count, h.mean ?? 0, quantileText(h, 0.5), quantileText(h, 0.95), quantileText(h, 0.99)))
        print("live-latency: published within " + [1.0, 2.0, 3.0, 4.0, 5.0].map {
            String(format: "%.0f s: %.1f %%", $0, 100 * Double(h.cumulative(atMost: $0)) / Double(h.count))
        }.joined(separator: ", ") + String(format: " (machine load %.1f)", AggregatorBenchmark.loadAverage()))
    }

    /// A quantile as text ("> 30 s" when it lies in the open bucket).
    static func quantileText(_ h: PrometheusHistogram, _ q: Double) -> String {
        guard let v = h.quantile(q) else { return "?" }
        return v.isInfinite ? String(format: "> %.0f s", h.largestFiniteBound) : String(format: "%.2f s", v)
    }
}
