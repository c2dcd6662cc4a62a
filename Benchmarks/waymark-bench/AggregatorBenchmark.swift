import Foundation
import WaymarkAggregator
import WaymarkConfig
import WaymarkCore
import WaymarkEdge
import WaymarkProtobuf
import WaymarkMQTT
import WaymarkPostgres
import WaymarkService

/// `waymark-bench aggregator [SIGHTINGS]`: sustained sightings per second end to end — batches
/// published to the broker as 20 gateways, taken by an in-process `AggregatorService`, fused, and
/// committed to PostgreSQL (with their high-water marks) — next to the rate at which a subscriber
/// that does nothing receives the same batches from the same broker in the same run.
/// Target: ≥ 200,000 sightings/s and ≥ half the do-nothing subscriber's rate, with zero loss.
/// Needs WAYMARK_MQTT_URL and WAYMARK_DATABASE_URL (`scripts/bench.sh aggregator` starts both, with
/// PostgreSQL's durable settings); creates and drops a private database. Prints the server's
/// durability settings with the figures.
enum AggregatorBenchmark {
    static let gateways = 20
    static let devices = 2000

    static func run() {
        let env = ProcessInfo.processInfo.environment
        guard let mqtt = env["WAYMARK_MQTT_URL"], let dbURL = env["WAYMARK_DATABASE_URL"] else {
            print("aggregator: needs WAYMARK_MQTT_URL and WAYMARK_DATABASE_URL: run it as `scripts/bench.sh aggregator`, which starts a private Mosquitto and PostgreSQL (durable settings)")
            return
        }
        let total = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 2_000_000 : 2_000_000
        do { try measure(mqtt: mqtt, dbURL: dbURL, total: total) } catch { print("aggregator: failed: \(error)") }
    }

    static func measure(mqtt: String, dbURL: String, total: Int) throws {
        let database = "waymark_bench_aggregator_\(getpid())"
        let admin = try PostgresConnection(url: dbURL)
        print("aggregator: PostgreSQL \(PostgresDurability.describe(admin))")
        try admin.execute("CREATE DATABASE \(database)")
        defer { try? admin.execute("DROP DATABASE IF EXISTS \(database) WITH (FORCE)") }
        let query = dbURL.firstIndex(of: "?").map { String(dbURL[$0...]) } ?? ""
        let base = dbURL.firstIndex(of: "?").map { String(dbURL[..<$0]) } ?? dbURL
        let url = String(base[..<base.lastIndex(of: "/")!]) + "/" + database + query
        let schema = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("schema").path
        try PostgresMigrator(directory: schema).migrate(try PostgresConnection(url: url))

        let siteID = "bench-\(getpid())"
        let sitePath = FileManager.default.temporaryDirectory.appendingPathComponent("\(siteID).yaml").path
        try siteYAML(siteID).write(toFile: sitePath, atomically: true, encoding: .utf8)
        let site = try SiteLoader.load(path: sitePath).site

        // Payloads, encoded before timing: one batch per gateway per 1-s window.
        let (payloads, sightings) = try makeBatches(total: total)
        let bytes = payloads.reduce(0) { $0 + $1.payload.count }
        print("aggregator: \(payloads.count) batches, \(sightings) sightings, \(bytes / 1_000_000) MB of JSON, \(gateways) gateways, \(devices) devices")
        checkpointCost(site: site, payloads: payloads)

        // 1. A subscriber that does nothing, on another topic prefix.
        let broker = CPUAccount.brokerPID()
        let idleBrokerBefore = broker.flatMap(CPUAccount.processSeconds)
        let idleThreadsBefore = CPUAccount.threads()
        let idleRate = try doNothingRate(mqtt: mqtt, payloads: payloads, sightings: sightings, prefix: "bench-idle-\(getpid())")
        let idleBroker = CPUAccount.difference(idleBrokerBefore, broker.flatMap(CPUAccount.processSeconds))
        let idleProcess = CPUAccount.delta(idleThreadsBefore, CPUAccount.threads()).reduce(0) { $0 + $1.seconds }
        print(String(format: "aggregator: do-nothing subscriber: %.0f sightings/s", idleRate))
        print(String(format: "aggregator: do-nothing run, CPU per million sightings: broker %@, publisher and subscriber %.2f s",
                     idleBroker.map { String(format: "%.2f s", $0 * 1e6 / Double(sightings)) } ?? "unknown (set WAYMARK_SERVICES_DIR)",
                     idleProcess * 1e6 / Double(sightings)))

        // 2. The aggregator.
        var config = AggregatorConfig(sitePath: sitePath)
        config.mqtt.url = mqtt
        if let n = Int(ProcessInfo.processInfo.environment["WAYMARK_BENCH_INFLIGHT"] ?? "") { config.mqtt.maxInflight = n }
        config.databaseURL = url
        config.metricsPort = 0
        config.flushIntervalMS = Int(ProcessInfo.processInfo.environment["WAYMARK_BENCH_FLUSH_MS"] ?? "") ?? 1000
        if let n = Int(ProcessInfo.processInfo.environment["WAYMARK_BENCH_DECODE_THREADS"] ?? "") { config.decodeThreads = n }
        print("aggregator: ingest.decode_threads = \(config.decodeThreads)")
        config.clock = .recorded  // synthetic windows are sent faster than real time
        let service = AggregatorService(config: config, site: site)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            ThreadName.set("wm-fusion")
            try? service.run()
            done.signal()
        }
        thread.start()
        while !service.isConnectedToBroker { Thread.sleep(forTimeInterval: 0.05) }
        Thread.sleep(forTimeInterval: 0.3)
        let publisher = try client(mqtt, "bench-pub")
        Thread.sleep(forTimeInterval: 0.1)  // its network thread exists before the thread snapshot below
        let topics = Topics(site: siteID)
        let cpuBefore = processCPUSeconds()
        let threadsBefore = CPUAccount.threads()
        let brokerBefore = broker.flatMap(CPUAccount.processSeconds)
        let started = Date()
        for p in payloads { try publisher.publish(topic: topics.sightings(p.gateway), payload: p.payload, qos: 1) }
        var publishedAfter = 0.0, fusedAfter = 0.0
        publishedAfter = Date().timeIntervalSince(started)
        while service.committedSightings < sightings && Date().timeIntervalSince(started) < 600 {
            Thread.sleep(forTimeInterval: 0.005)
            if fusedAfter == 0, service.fusedSightings >= sightings { fusedAfter = Date().timeIntervalSince(started) }
        }
        let elapsed = Date().timeIntervalSince(started)
        let cpu = processCPUSeconds() - cpuBefore
        let threadCPU = CPUAccount.delta(threadsBefore, CPUAccount.threads())
        let brokerCPU = CPUAccount.difference(brokerBefore, broker.flatMap(CPUAccount.processSeconds))
        let committed = service.committedSightings
        // The writer's PostgreSQL backend was started during the run: all its CPU time is the run's.
        let backends = try PostgresConnection(url: url).query(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()").rows.map { try $0.int(0) }
        let backendCPU = backends.reduce(0.0) { $0 + (CPUAccount.processSeconds($1) ?? 0) }
        service.stop()
        done.wait()
        publisher.close()
        let stored = try PostgresConnection(url: url).query(
            "SELECT coalesce(sum(sightings), 0)::bigint FROM gateway_ingest_hourly WHERE site_id = $1", [siteID]).first?.int(0) ?? -1
        let rows = try PostgresConnection(url: url).query("""
            SELECT (SELECT count(*) FROM region_events), (SELECT count(*) FROM visits), (SELECT count(*) FROM transitions),
                   (SELECT count(*) FROM device_state), (SELECT coalesce(avg(octet_length(checkpoint)), 0)::int FROM device_state)
            """).first
        let rate = Double(committed) / elapsed
        print(String(format: "aggregator: end to end (broker → fusion → committed in PostgreSQL): %.0f sightings/s (%.2f s), %.0f%% of the do-nothing subscriber",
                     rate, elapsed, 100 * rate / idleRate))
        print(String(format: "aggregator: published after %.2f s, fused after %.2f s, committed after %.2f s", publishedAfter, fusedAfter, elapsed))
        if let rows {
            print("aggregator: rows: \(try rows.int(0)) region events, \(try rows.int(1)) visits, \(try rows.int(2)) transitions, \(try rows.int(3)) device checkpoints of \(try rows.int(4)) bytes on average")
        }
        print(String(format: "aggregator: CPU per million sightings: %.2f s in the aggregator process (publisher included), %.2f s in its PostgreSQL backend (machine load: %.1f)",
                     cpu * 1e6 / Double(sightings), backendCPU * 1e6 / Double(sightings), loadAverage()))
        let perMillion = { (s: Double) in String(format: "%.2f s", s * 1e6 / Double(sightings)) }
        // libmosquitto names its network threads alike: the aggregator's client connected first.
        let loops = threadCPU.filter { $0.name == "mosquitto loop" }.map(\.tid).sorted()
        func label(_ t: CPUAccount.Thread) -> String {
            if t.tid == Int(getpid()) { return "main (publishing the batches)" }
            if t.name == "mosquitto loop" { return t.tid == loops.first ? "aggregator's mosquitto loop" : "publisher's mosquitto loop" }
            return t.name
        }
        print("aggregator: CPU per million sightings by thread: " + threadCPU.filter { $0.seconds >= 0.01 }
            .map { "\(label($0)) \(perMillion($0.seconds))" }.joined(separator: ", ")
            + "; broker " + (brokerCPU.map(perMillion) ?? "unknown (set WAYMARK_SERVICES_DIR)"))
        // What the target leaves: at half the subscriber's rate, every core of the machine for one
        // second covers idleRate / 2 sightings, broker and PostgreSQL included.
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        let used = (cpu + backendCPU + (brokerCPU ?? 0)) * 1e6 / Double(sightings)
        print(String(format: "aggregator: CPU budget per million sightings at 50%% of the subscriber on %.0f cores: %.2f s; this run used %.2f s (aggregator process + PostgreSQL backend%@)",
                     cores, cores * 1e6 / (idleRate / 2), used, brokerCPU == nil ? "; broker unknown" : " + broker"))
        print("aggregator: loss check: published \(sightings), committed \(committed), in gateway_ingest_hourly \(stored) — \(stored == sightings ? "zero loss" : "MISMATCH")")
        print("aggregator: target ≥ 200000 sightings/s and ≥ 50% of the subscriber: \(rate >= 200_000 && rate >= idleRate / 2 && stored == sightings ? "met" : "NOT met")")
    }

    /// User + system CPU of this process so far.
    static func processCPUSeconds() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6 + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
    }

    /// The 1-minute load average (other work on the machine slows the run down).
    static func loadAverage() -> Double {
        var load = [0.0, 0.0, 0.0]
        return getloadavg(&load, 3) > 0 ? load[0] : -1
    }

    static func siteYAML(_ id: String) -> String {
        var y = "site: \(id)\ngateways:\n"
        for g in 0..<gateways { y += "  - { id: gw-\(g), position: [\(Double(g) * 10), 0.0] }\n" }
        y += "regions:\n"
        for g in 0..<gateways { y += "  - { id: r\(g), gateways: [gw-\(g)], radius_m: 3.0 }\n" }
        y += "edges:\n"
        for g in 1..<gateways { y += "  - [r\(g - 1), r\(g)]\n" }
        return y + "tracking:\n  ibeacon_uuids: [\"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0\"]\n"
    }

    /// Each device sits at region (d + w / 60) mod 20 in window w: heard strongly there and weakly
    /// by the next gateway. Encoded as the edge encodes them (`BatchCoding`, JSON by default).
    static func makeBatches(total: Int, encoding: BatchEncoding = .json) throws -> (payloads: [(gateway: String, payload: [UInt8])], sightings: Int) {
        let batches = makeSightingBatches(total: total)
        let payloads = batches.map { b -> (gateway: String, payload: [UInt8]) in
            (b.gateway, encoding == .json ? BatchCoding.encode(b) : ProtobufBatchCoding.encode(b))
        }
        return (payloads, batches.reduce(0) { $0 + $1.sightings.count })
    }

    /// The batches of `makeBatches`, not encoded: one per gateway per 1-s window, in window order.
    static func makeSightingBatches(total: Int) -> [SightingBatch] {
        let uuid = BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let ids = (0..<devices).map { DeviceID.ibeacon(uuid: uuid, major: 1, minor: UInt16($0)) }
        let windows = max(1, total / (2 * devices))
        let t0 = Date().timeIntervalSince1970 - Double(windows) - 60
        var out: [SightingBatch] = []
        for w in 0..<windows {
            let t = t0 + Double(w)
            var byGateway = Array(repeating: [SightingBatch.Entry](), count: gateways)
            for d in 0..<devices {
                let home = (d + w / 60) % gateways
                for (g, rssi) in [(home, -55.0 - Double(d % 7)), ((home + 1) % gateways, -82.0 - Double(d % 5))] {
                    byGateway[g].append(.init(device: ids[d], count: 3, rssiMax: rssi + 2, rssiMean: rssi, rssiLast: rssi - 1,
                                              tx: -59, first: t + 0.05, last: t + 0.95))
                }
            }
            for g in 0..<gateways {
                out.append(SightingBatch(gateway: "gw-\(g)", boot: "bench", seq: UInt64(w + 1), start: t, end: t + 1, sightings: byGateway[g]))
            }
        }
        return out
    }

    static func client(_ url: String, _ name: String) throws -> MQTTClient {
        let c = try MQTTClient(.init(clientID: "\(name)-\(getpid())", maxInflight: 1000, maxQueued: 0))
        try c.connect(try MQTTConnection(url: url))
        try c.waitUntilConnected(timeout: 10)
        return c
    }

    /// Sightings per second a subscriber that only counts receives.
    static func doNothingRate(mqtt: String, payloads: [(gateway: String, payload: [UInt8])], sightings: Int, prefix: String) throws -> Double {
        let received = Counter()
        let subscriber = try MQTTClient(.init(clientID: "bench-idle-\(getpid())"))
        subscriber.onMessage = { _ in received.add() }
        try subscriber.subscribe(prefix + "/gateways/+/sightings", qos: 1)
        try subscriber.connect(try MQTTConnection(url: mqtt))
        try subscriber.waitUntilConnected(timeout: 10)
        Thread.sleep(forTimeInterval: 0.3)
        let publisher = try client(mqtt, "bench-idle-pub")
        let started = Date()
        for p in payloads { try publisher.publish(topic: "\(prefix)/gateways/\(p.gateway)/sightings", payload: p.payload, qos: 1) }
        while received.value < payloads.count && Date().timeIntervalSince(started) < 300 { Thread.sleep(forTimeInterval: 0.001) }
        let elapsed = Date().timeIntervalSince(started)
        publisher.close()
        subscriber.close()
        return Double(sightings) * Double(received.value) / Double(payloads.count) / elapsed
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func add() { lock.lock(); n += 1; lock.unlock() }
        var value: Int { lock.lock(); defer { lock.unlock() }; return n }
    }
}
