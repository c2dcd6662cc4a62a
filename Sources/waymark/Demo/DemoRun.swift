import Foundation
import WaymarkCore
import WaymarkPostgres
import WaymarkSimulation

/// One run of `waymark demo`: the steps in order, the children it starts, and their clean stop.
struct DemoRun {
    struct Interrupted: Error {}

    let site: Site
    let sitePath: String
    let work: String
    let mqttURL: String
    let databaseURL: String
    let waymark: String
    let binDirectory: String
    let devices: Int
    let durationS: Double
    let durationText: String
    let speedup: Double
    let seed: UInt64
    /// Seconds of the live-latency measurement at real time after the reports (0: skipped).
    let liveSeconds: Int
    /// The caller removes `work` when the demo ends (scripts/demo.sh without `--keep`).
    let temporaryWork: Bool

    func execute() throws {
        let began = Date().timeIntervalSince1970
        let stop = DemoStopFlag()
        let results = DemoResults(waymark: waymark, sitePath: sitePath, siteID: site.id, databaseURL: databaseURL, work: work)
        say("waymark demo: site '\(site.id)' (\(site.gateways.count) gateways, \(site.regions.count) regions), \(devices) devices, "
            + "\(durationText) simulated at \(Self.number(speedup))× real time, seed \(seed); files in \(work)")

        say("[1/5] database: applying migrations")
        guard results.run(["db", "migrate", "--database", databaseURL]) else {
            throw DemoError("`waymark db migrate` failed (see above); is PostgreSQL running at the --database URL?")
        }
        if let held = try results.storedVisits(), held > 0 {
            throw DemoError("the database already holds \(held) visits of site '\(site.id)'; the demo needs a database without "
                            + "them (scripts/demo.sh creates a fresh one each time): pass another --database")
        }
        try checkStop(stop)

        // The simulated period ends about when the replay ends, so that batch times look like a
        // gateway clock to the aggregator (never in the future, a little in the past).
        let prepare = 3 + Double(devices) * durationS * 6e-5
        let planned = began + prepare + Double(site.gateways.count) * 0.05
        var parameters = SimulationParameters()
        parameters.deviceCount = devices
        parameters.duration = durationS
        parameters.seed = seed
        parameters.start = (planned - durationS * (1 - 1 / speedup)).rounded(.down)
        say("[2/5] simulating what each gateway hears from \(Self.clock(parameters.start)) to \(Self.clock(parameters.end))")
        let venue = try DemoVenue.write(site: site, parameters: parameters, directory: work) { _ in }
        say("      \(venue.sightings) sightings in \(site.gateways.count) replay files (\(work)/replay), "
            + "\(venue.totalBatches) one-second batches to publish; ground truth in \(venue.truthPath)")
        try checkStop(stop)

        let children = DemoChildren(pgidFile: work + "/children.pgid")
        do {
            try runPipeline(venue: venue, children: children, stop: stop, results: results)
        } catch {
            children.stopAll(timeout: 10)
            throw error
        }
        children.stopAll(timeout: 10)
        try checkStop(stop)
        try report(venue: venue, results: results, began: began, stop: stop)
    }

    /// Steps 3 and 4: the aggregator and one edge per gateway, until every batch is acked.
    func runPipeline(venue: DemoVenue, children: DemoChildren, stop: DemoStopFlag, results: DemoResults) throws {
        try FileManager.default.createDirectory(atPath: work + "/logs", withIntermediateDirectories: true)
        let aggregatorLog = work + "/logs/aggregator.log"
        let aggregator = try children.spawn(
            name: "waymark-aggregator", executable: binDirectory + "/waymark-aggregator",
            arguments: ["--site", sitePath, "--broker", mqttURL, "--database", databaseURL, "--metrics-port", "0"],
            log: aggregatorLog)
        try waitForLog(aggregatorLog, containing: "connected to the broker", child: aggregator, children: children, stop: stop)
        let monitor = try DemoMonitor(url: mqttURL, topics: Topics(site: site.id))
        defer { monitor.close() }

        // Every replay file starts at the same simulated instant (DemoVenue.clockGateway), and every
        // edge is told the same wall-clock moment for it (replay.start_at): one clock for all, however
        // long each process takes to start. Never earlier than planned, so batch times never lie ahead
        // of the aggregator's clock.
        let planned = venue.start + durationS * (1 - 1 / speedup)
        let startAt = max(planned, Date().timeIntervalSince1970 + 1 + 0.04 * Double(site.gateways.count))
        var edges: [Int] = []
        for (g, gateway) in site.gateways.enumerated() {
            let spool = "\(work)/spool/\(gateway.id)"
            try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
            edges.append(try children.spawn(
                name: "waymark-edge \(gateway.id)", executable: binDirectory + "/waymark-edge",
                arguments: ["--site", sitePath, "--gateway", gateway.id, "--source", "replay:" + venue.replayFiles[g],
                            "--broker", mqttURL, "--rate", Self.number(speedup), "--window", Self.number(DemoVenue.window),
                            "--spool-dir", spool, "--metrics-port", "0", "--set", "spool.fsync=false",
                            "--set", String(format: "replay.start_at=%.3f", startAt)],
                log: "\(work)/logs/edge-\(gateway.id).log"))
        }
        let edgesStarted = startAt
        say("[3/5] started waymark-aggregator and \(edges.count) waymark-edge processes (one per gateway, replay at "
            + "\(Self.number(speedup))×, own spools); logs in \(work)/logs")

        let db = try? PostgresConnection(url: databaseURL)
        defer { db?.close() }
        var progress = DemoProgress()
        var lastAcked = -1, lastChange = Date().timeIntervalSince1970, lastQuery = 0.0
        var visits: Int?
        let replayS = durationS / speedup
        while true {
            if stop.received != nil { progress.finish(); throw Interrupted() }
            for ended in children.reap() {
                progress.finish()
                throw DemoError("\(ended.name) stopped unexpectedly (\(DemoChildren.describe(ended.exitStatus ?? 0))); its log "
                                + "\(ended.log) ends with:\n\(DemoChildren.tail(ended.log))")
            }
            var published = 0, acked = 0
            for (g, gateway) in site.gateways.enumerated() {
                published += min(monitor.publishedCount(gateway.id), venue.expectedBatches[g])
                acked += min(monitor.ackedSeq(gateway.id), venue.expectedBatches[g])
            }
            let now = Date().timeIntervalSince1970
            if now - lastQuery >= 1, let db {
                lastQuery = now
                visits = DemoResults.visitCount(db, site: site.id) ?? visits
            }
            let fraction = max(0, min(1, (now - edgesStarted) / replayS))
            progress.show(.init(simulatedTime: venue.start + fraction * durationS, fraction: fraction, published: published,
                                acked: acked, expected: venue.totalBatches, visits: visits, gatewaysRunning: children.running.count - 1))
            if acked >= venue.totalBatches { break }
            if acked != lastAcked { lastAcked = acked; lastChange = now }
            if now - edgesStarted > replayS + 60, now - lastChange > 90 {
                progress.finish()
                throw DemoError("no batch acknowledged for 90 s (\(acked) of \(venue.totalBatches)); see \(aggregatorLog)"
                                + " and the edge logs in \(work)/logs")
            }
            Thread.sleep(forTimeInterval: 0.25)
        }
        progress.finish()
        let took = Date().timeIntervalSince1970 - edgesStarted
        let killed = children.stop([aggregator], timeout: 30)
        guard killed.isEmpty else { throw DemoError("waymark-aggregator did not stop within 30 s of SIGTERM; see \(aggregatorLog)") }
        children.stop(edges, timeout: 10)
        say("[4/5] all \(venue.totalBatches) batches published and acknowledged after the aggregator committed them "
            + "(\(String(format: "%.1f", took)) s for \(durationText) simulated); aggregator and edges stopped (SIGTERM)")
    }

    /// Step 5: reports, accuracy, map and how to explore.
    func report(venue: DemoVenue, results: DemoResults, began: Double, stop: DemoStopFlag) throws {
        let stored = try results.exportStored(to: work + "/stored.jsonl")
        say("[5/5] stored in PostgreSQL: \(stored.visits) visits, \(stored.journeys) journeys, \(stored.locations) current-region changes, \(stored.devices) devices\n")
        if !site.notifications.isEmpty {
            say("== Notifications sent by the site's rules (docs/notifications.md) ==")
            let counts = try results.notificationCounts()
            for rule in site.notifications {
                let c = counts[rule.id] ?? .init()
                say("\(rule.id) (\(rule.trigger.rawValue)): \(c.sent) sent to \(c.devices) devices, \(c.published) confirmed by the broker"
                    + (rule.webhook == nil ? "" : ", \(c.webhookDelivered) delivered to its webhook"))
            }
            say("(on MQTT: \(Topics(site: site.id).notifications); per rule and hour: waymark report notifications)\n")
        }
        let range = DemoResults.range(start: venue.start, end: venue.end)
        let common = ["--from", range.from, "--to", range.to, "--site", sitePath, "--database", databaseURL]
        say("== Foot traffic per region (waymark report traffic --by day) ==")
        guard results.run(["report", "traffic", "--by", "day"] + common) else { throw DemoError("`waymark report traffic` failed") }
        say("\n== Top paths: the most common sub-paths of 3 and 4 regions (waymark report paths also ranks whole journeys) ==")
        for line in try results.topSubpaths(from: range.from, to: range.to, limit: 5) { say(line) }
        say("\n== Accuracy of what the aggregator stored, against the simulator's ground truth (waymark evaluate) ==")
        guard results.run(["evaluate", "--site", sitePath, "--truth", venue.truthPath, "--output", work + "/stored.jsonl"]) else {
            throw DemoError("`waymark evaluate` failed")
        }
        say("(Visits still open when the period ended are not stored yet, as in a live venue: the aggregator writes a visit when it ends.)")
        if let late = Self.lateBatches(inLog: work + "/logs/aggregator.log"), late > 0 {
            say("(\(late) of \(venue.totalBatches) batches reached the aggregator behind the event-time watermark and were fused late: "
                + "their gateways fell behind the \(Self.number(speedup))× clock on this machine. Such late evidence costs accuracy; "
                + "a lower --speedup avoids it.)")
        }
        say("\n== Reference: the same sightings through the same fusion engine offline, in time order (waymark replay), "
            + "and the naive strongest-gateway rule ==")
        let offline = work + "/replay-output.jsonl"
        guard results.run(["replay", "--site", sitePath, "--input", venue.allSightingsPath, "--output", offline], quiet: true),
              results.run(["evaluate", "--site", sitePath, "--truth", venue.truthPath, "--output", offline,
                           "--sightings", venue.allSightingsPath]) else {
            throw DemoError("`waymark replay` or `waymark evaluate` on \(venue.allSightingsPath) failed")
        }
        say("(The live figures trail these when the speed-up outruns this machine: 37 edge processes, the aggregator, "
            + "Mosquitto and PostgreSQL share its cores, and gateways that fall behind their clock deliver late evidence. "
            + "A lower --speedup brings them closer.)\n")
        if liveSeconds > 0 { try reportLiveLatency(stop: stop) }
        guard results.run(["report", "map", "--svg", work + "/map.svg"] + common) else { throw DemoError("`waymark report map` failed") }
        // The bulky inputs go (hundreds of MB); the truth, the outputs, the logs and the database stay.
        for bulky in ["/replay", "/spool", "/sightings.jsonl"] { try? FileManager.default.removeItem(atPath: work + bulky) }
        let finished = "Demo finished in \(String(format: "%.0f", Date().timeIntervalSince1970 - began)) s; "
            + "nothing the demo started is still running."
        if temporaryWork {
            say("""

                The map (map.svg), the logs and the database in \(work) are removed with it now;
                run scripts/demo.sh --keep to keep them and explore the data with scripts/demo-psql.sh.
                \(finished)
                """)
        } else {
            say("""

                Map: \(work)/map.svg (regions sized by visits, links by transitions)
                Explore the data with psql: scripts/demo-psql.sh \(work)   (remove the directory when done: rm -rf \(work))
                  e.g. SELECT region_id, count(*) FROM visits GROUP BY 1 ORDER BY 2 DESC;
                \(finished)
                """)
        }
    }

    /// The live region's delay at real time (`DemoLiveLatency`).
    func reportLiveLatency(stop: DemoStopFlag) throws {
        say("== How soon a live region reaches the broker, at real time (waymark_aggregator_live_region_delay_seconds) ==")
        say("(\(liveSeconds) s of the site's gateways played at real time by `waymark simulate --publish --speedup 1 --empty-windows`, "
            + "\(devices) devices, into a second waymark-aggregator with its defaults, on a copy of the site and a database of its own)")
        let f = try DemoLiveLatency(run: self, seconds: liveSeconds).measure(stop: stop)
        say(String(format: "%d changes of a device's live region published; p50 %.2f s, p95 %.2f s after the end of the second of "
                   + "evidence that decided them; %.1f %% within 3 s", f.changes, f.p50, f.p95, 100 * f.withinThree))
        say("(The replay above runs at \(Self.number(speedup))× real time, where the pipeline's own waits — the edge's window, the "
            + "reorder stage, the states' publication — stand for many simulated seconds, so only a real-time run shows this. "
            + "`waymark evaluate`'s \"live region published after\" compares the live region with the smoothed history instead, "
            + "which dates a move where its evidence turned, with hindsight the live filter does not have (up to twice the "
            + "smoothing lag before the filter shows it): docs/accuracy.md.)\n")
    }

    func waitForLog(_ path: String, containing text: String, child: Int, children: DemoChildren, stop: DemoStopFlag) throws {
        let deadline = Date(timeIntervalSinceNow: 60)
        while Date() < deadline {
            try checkStop(stop)
            if let log = try? String(contentsOfFile: path, encoding: .utf8), log.contains(text) { return }
            if let ended = children.reap().first {
                throw DemoError("\(ended.name) stopped at start (\(DemoChildren.describe(ended.exitStatus ?? 0))):\n\(DemoChildren.tail(ended.log))")
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw DemoError("\(children.children[child].name) did not connect within 60 s; see \(path)")
    }

    func checkStop(_ stop: DemoStopFlag) throws { if stop.received != nil { throw Interrupted() } }

    func say(_ line: String) {
        print(line)
        fflush(nil)
    }

    /// The aggregator's count of batches fused behind the event-time watermark, from its last
    /// "stopped" log line (`late_batches=N`).
    static func lateBatches(inLog path: String) -> Int? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let line = text.split(separator: "\n").last(where: { $0.contains("late_batches=") }),
              let r = line.range(of: "late_batches=") else { return nil }
        return Int(line[r.upperBound...].prefix { $0.isNumber })
    }

    static func clock(_ t: Double) -> String {
        let f = ISO8601DateFormatter()
        f.timeZone = TimeZone(identifier: "UTC")
        return f.string(from: Date(timeIntervalSince1970: t))
    }

    static func number(_ x: Double) -> String { x == x.rounded() ? String(Int(x)) : String(x) }
}
