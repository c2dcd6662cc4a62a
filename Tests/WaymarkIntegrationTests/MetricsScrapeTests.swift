import Foundation
import HTTPTestSupport
import Testing
import WaymarkPostgres

/// The real `waymark-aggregator` and `waymark-edge` programs (issue 17): while 50 clients hold
/// idle connections to a metrics endpoint and a few others send their requests a byte at a time,
/// every Prometheus scrape is answered within a second.
@Suite("Metrics endpoints under idle and slow clients", .enabled(if: AggregatorTestServices.shouldRun), .serialized)
struct MetricsScrapeTests {
    /// The port a program announced in its log (`metrics on/at http://HOST:PORT/metrics`), waiting
    /// up to `timeout` seconds for the line.
    static func announcedPort(log: String, timeout: Double = 30, process: AggregatorChild) throws -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        let pattern = try NSRegularExpression(pattern: #"http://[0-9.]+:([0-9]+)/metrics"#)
        while Date() < deadline {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let m = pattern.firstMatch(in: text, range: NSRange(location: 0, length: (text as NSString).length)),
               let port = Int((text as NSString).substring(with: m.range(at: 1))) {
                return port
            }
            try #require(process.isRunning, "the program exited before serving metrics:\n\(text)")
            Thread.sleep(forTimeInterval: 0.2)
        }
        Issue.record("no metrics address in the log within \(timeout) s")
        throw RawHTTPClient.Failure("no metrics port")
    }

    /// 50 idle and 5 slow connections, then 10 scrapes: the latencies in seconds. One scrape
    /// first, before the crowd, with time to spare (a program's first request pages code in).
    static func scrapeUnderLoad(port: Int, expecting metric: String) throws -> [Double] {
        #expect(try RawHTTPClient.get(port: port, path: "/metrics", timeout: 10).status == 200)
        let crowd = try RawHTTPClient.Crowd(port: port, idle: 50, slow: 5)
        defer { crowd.close() }
        Thread.sleep(forTimeInterval: 0.3)
        var latencies: [Double] = []
        for _ in 0..<10 {
            let r = try RawHTTPClient.get(port: port, path: "/metrics", timeout: 1)
            #expect(r.status == 200)
            #expect(r.body.contains(metric), "the scrape carries \(metric)")
            latencies.append(r.seconds)
        }
        return latencies
    }

    static func report(_ name: String, _ latencies: [Double]) {
        let text = latencies.map { String(format: "%.3f", $0) }.joined(separator: " ")
        print("\(name) metrics: 10 scrapes with 50 idle + 5 slow connections held, seconds: \(text)")
    }

    @Test func aggregatorAnswersScrapesWhileClientsHoldIdleAndSlowConnections() throws {
        let mqtt = try AggregatorTestServices.requireMQTT()
        let db = try PostgresTestDatabase("metrics_scrape")
        defer { db.drop() }
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(try db.connect())
        let siteID = "metrics-\(UInt32.random(in: 0...UInt32.max))"
        let sitePath = try aggregatorTempFile("site.yaml", AggregatorTestVenue.yaml(site: siteID, count: 3))
        let log = sitePath + ".log"
        let process = try AggregatorProcesses.launchAggregator(
            ["--site", sitePath, "--broker", mqtt, "--database", db.url, "--metrics-port", String(try LocalPort.free()),
             "--set", "mqtt.client_id=agg-\(siteID)", "--set", "log.level=info"], log: log)
        defer { if process.isRunning { process.signal(SIGKILL); process.wait() } }
        let port = try Self.announcedPort(log: log, process: process)
        let latencies = try Self.scrapeUnderLoad(port: port, expecting: "waymark_aggregator_batches_total")
        Self.report("waymark-aggregator", latencies)
        #expect(latencies.allSatisfy { $0 < 1 }, "scrape seconds: \(latencies)")
        process.signal(SIGTERM)
        #expect(process.wait() == 0, "clean stop; log:\n\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
    }

    @Test func edgeAnswersScrapesWhileClientsHoldIdleAndSlowConnections() throws {
        let mqtt = try AggregatorTestServices.requireMQTT()
        let siteID = "metrics-edge-\(UInt32.random(in: 0...UInt32.max))"
        let sitePath = try aggregatorTempFile("site.yaml", AggregatorTestVenue.yaml(site: siteID, count: 3))
        let dir = URL(fileURLWithPath: sitePath).deletingLastPathComponent()
        let replay = dir.appendingPathComponent("replay.jsonl").path
        let start = Date().timeIntervalSince1970 - 5
        let lines = (0..<20).map { #"{"t":\#(start + Double($0) * 0.5),"gateway":"gw-0","device":"mac:e7-8f-13-56-24-ce","rssi":-60}"# }
        try (lines.joined(separator: "\n") + "\n").write(toFile: replay, atomically: true, encoding: .utf8)
        let log = sitePath + ".edge.log"
        let edge = try DeployEdgeTests.edgeBinary()
        let process = try AggregatorChild.spawn(
            [edge, "--site", sitePath, "--gateway", "gw-0", "--source", "replay:\(replay)", "--rate", "0",
             "--broker", mqtt, "--spool-dir", dir.appendingPathComponent("spool").path, "--metrics-port", String(try LocalPort.free()),
             "--log-level", "info", "--set", "mqtt.client_id=edge-\(siteID)"], output: log)
        defer { if process.isRunning { process.signal(SIGKILL); process.wait() } }
        let port = try Self.announcedPort(log: log, process: process)
        let latencies = try Self.scrapeUnderLoad(port: port, expecting: "waymark_edge_")
        Self.report("waymark-edge", latencies)
        #expect(latencies.allSatisfy { $0 < 1 }, "scrape seconds: \(latencies)")
        process.signal(SIGTERM)
        #expect(process.wait() == 0, "clean stop; log:\n\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
    }
}
