import AsyncHTTPClient
import Foundation
import NIOCore
import WaymarkHTTP
import WaymarkPostgres
#if canImport(Glibc)
import Glibc
#endif

/// The demo's live-latency figure: how soon after its evidence a change of a device's live region
/// reaches the broker, measured at real time.
///
/// The replay before it runs at `--speedup` times real time, where the pipeline's own waits (the
/// edge's 1-s window, the aggregator's reorder stage, its 1-s state publication) are wall-clock
/// seconds that stand for many simulated ones, so it cannot show this. Here a second
/// `waymark-aggregator`, on a copy of the site under an id of its own (its own topics; the demo's
/// retained states stay as they are) and a database of its own (dropped afterwards), takes the
/// site's gateways played at real time for `seconds` by `waymark simulate --publish --speedup 1
/// --empty-windows` (what waymark-edge sends on a live radio), with its default settings; the
/// figures are its histogram `waymark_aggregator_live_region_delay_seconds` (docs/aggregator.md,
/// "Live latency"), read from its metrics endpoint.
struct DemoLiveLatency {
    let run: DemoRun
    let seconds: Int

    struct Figures {
        var changes: Int
        var p50: Double
        var p95: Double
        var withinThree: Double
    }

    func measure(stop: DemoStopFlag) throws -> Figures {
        let work = run.work + "/live"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let siteID = run.site.id + "-live"
        let sitePath = work + "/site.yaml"
        let text = try String(contentsOfFile: run.sitePath, encoding: .utf8)
        try text.replacingOccurrences(of: #"(?m)^site:.*$"#, with: "site: \(siteID)", options: .regularExpression)
            .write(toFile: sitePath, atomically: true, encoding: .utf8)

        let database = "waymark_demo_live_\(getpid())"
        let admin = try PostgresConnection(url: run.databaseURL)
        defer { admin.close() }
        try admin.execute("CREATE DATABASE \(database)")
        defer { try? admin.execute("DROP DATABASE IF EXISTS \(database) WITH (FORCE)") }
        let databaseURL = PostgresURL.withDatabase(run.databaseURL, database)
        let results = DemoResults(waymark: run.waymark, sitePath: sitePath, siteID: siteID, databaseURL: databaseURL, work: work)
        guard results.run(["db", "migrate", "--database", databaseURL], silent: true) else {
            throw DemoError("`waymark db migrate` failed on the live-latency database \(database)")
        }

        let port = try Self.freePort()
        let children = DemoChildren(pgidFile: run.work + "/children.pgid")
        defer { children.stopAll(timeout: 10) }
        let log = work + "/aggregator.log"
        let aggregator = try children.spawn(
            name: "waymark-aggregator (live latency)", executable: run.binDirectory + "/waymark-aggregator",
            arguments: ["--site", sitePath, "--broker", run.mqttURL, "--database", databaseURL, "--metrics-port", String(port)],
            log: log)
        try run.waitForLog(log, containing: "connected to the broker", child: aggregator, children: children, stop: stop)
        let simulate = try children.spawn(
            name: "waymark simulate --publish", executable: run.waymark,
            arguments: ["simulate", "--site", sitePath, "--devices", String(run.devices), "--duration", "\(seconds)s",
                        "--seed", String(run.seed), "--arrivals", "start", "--publish", run.mqttURL, "--speedup", "1",
                        "--empty-windows", "--ack-wait", "30", "--quiet"],
            log: work + "/simulate.log")
        while children.children[simulate].exitStatus == nil {
            try run.checkStop(stop)
            if let ended = children.reap().first(where: { $0.pid != children.children[simulate].pid }) {
                throw DemoError("\(ended.name) stopped (\(DemoChildren.describe(ended.exitStatus ?? 0))):\n\(DemoChildren.tail(ended.log))")
            }
            Thread.sleep(forTimeInterval: 0.25)
        }
        let status = children.children[simulate].exitStatus ?? 0
        guard status == 0 else {
            throw DemoError("`waymark simulate --publish` failed (\(DemoChildren.describe(status))):\n\(DemoChildren.tail(work + "/simulate.log"))")
        }
        Thread.sleep(forTimeInterval: 2)  // the last states' publication (every second)
        let metrics = try Self.fetch("http://127.0.0.1:\(port)/metrics")
        guard let h = PrometheusHistogram(metrics, name: "waymark_aggregator_live_region_delay_seconds"), h.count > 0,
              let p50 = h.quantile(0.5), let p95 = h.quantile(0.95) else {
            throw DemoError("the live-latency aggregator published no change of a live region; see \(log)")
        }
        return Figures(changes: h.count, p50: p50, p95: p95, withinThree: Double(h.cumulative(atMost: 3)) / Double(h.count))
    }

    /// A TCP port on 127.0.0.1 that nothing listens on now (the kernel's pick for port 0).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw DemoError("cannot open a socket to find a free port: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { throw DemoError("cannot find a free port on 127.0.0.1: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// The body of a GET of `url`.
    static func fetch(_ url: String) throws -> String {
        let response = try HTTPClient.shared.get(url: url).wait()
        guard response.status == .ok, let body = response.body else {
            throw DemoError("GET \(url) answered \(response.status)")
        }
        return String(buffer: body)
    }
}
