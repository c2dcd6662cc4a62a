import Foundation
import Testing
import WaymarkConfig
import WaymarkCore
import WaymarkPostgres

/// A site's own broker bridged into a central one with Mosquitto's bridge, as
/// deploy/mosquitto/make-bridge-config.sh writes it (docs/scaling.md, "Several brokers"):
/// the production configuration of both brokers with TLS and the ACL, then the whole pipeline —
/// gateways on the site broker, the aggregator on the central one — with the central broker
/// restarted mid-stream.
@Suite("Deploy: a site broker bridged into a central broker", .serialized, .enabled(if: DeployEnvironment.brokerSuiteRuns))
struct DeployBridgeTests {
    @Test("batches and retained status cross to the central broker, acks come back, the bridge account forges nothing")
    func bridgeCarriesBatchesStatusAndAcks() throws {
        let central = try DeployBroker.start(brokerOptions: ["--site-broker"])
        defer { central.stop() }
        let out = try DeployEnvironment.temporaryDirectory("deploy-bridge")
        defer { try? FileManager.default.removeItem(at: out) }
        let bridgeUser = "sitebroker@\(DeployBroker.site)"
        let made = try DeployCommand.run(DeployEnvironment.script("deploy/mosquitto/make-bridge-config.sh"), [
            "--remote", "127.0.0.1:\(central.tlsPort)",
            "--cafile", central.certificates.appendingPathComponent("ca.crt").path,
            "--remote-password-file", central.configuration.appendingPathComponent("secrets").appendingPathComponent(bridgeUser).path,
            central.siteURL.path, out.path,
        ])
        try #require(made.status == 0, "make-bridge-config.sh failed: \(made)")
        let bridgeFile = out.appendingPathComponent("waymark-bridge-\(DeployBroker.site).conf")
        let site = try DeployBroker.start(extraConfiguration: [bridgeFile])
        defer { site.stop() }
        let p = central.prefix

        // The bridge announces its link on the central broker (retained), readable by the reader.
        let reader = try central.connection(DeployBroker.readerUser, tls: true)
        var state: [String] = []
        for _ in 0..<40 where state != ["\(p)/bridge/state 1"] {
            state = try DeployCommand.run("mosquitto_sub", reader + ["-v", "-W", "1", "-C", "1", "-t", "\(p)/bridge/state"]).lines
        }
        try #require(state == ["\(p)/bridge/state 1"], "the bridge did not connect; site broker log:\n\(site.log)")

        let aggregator = try central.connection(DeployBroker.aggregatorUser, tls: true)
        let gatewayA = try site.connection(DeployBroker.gatewayUser("gw-a"), tls: true)
        let aggTopics = ["\(p)/gateways/+/sightings/#", "\(p)/gateways/+/status"]
        let gatewayTopics = ["\(p)/gateways/gw-a/ack/#"]
        try central.openSession(aggregator, clientID: "agg", topics: aggTopics)
        try site.openSession(gatewayA, clientID: "gw-a", topics: gatewayTopics)

        // Site → central: a batch (and one of shard 1, as a sharded gateway sends), and the retained status.
        try site.publish(gatewayA, topic: "\(p)/gateways/gw-a/sightings", "batch-1")
        try site.publish(gatewayA, topic: "\(p)/gateways/gw-a/sightings/1", "shard-batch-1")
        try site.publish(gatewayA, topic: "\(p)/gateways/gw-a/status", "online", retain: true)
        var got: [String] = []
        for _ in 0..<10 where !got.contains("\(p)/gateways/gw-a/sightings batch-1") || !got.contains("\(p)/gateways/gw-a/sightings/1 shard-batch-1") {
            got += try central.collect(aggregator, clientID: "agg", topics: aggTopics, skipRetained: true)
        }
        #expect(got.filter { $0 == "\(p)/gateways/gw-a/sightings batch-1" }.count == 1, "\(got)")
        #expect(got.filter { $0 == "\(p)/gateways/gw-a/sightings/1 shard-batch-1" }.count == 1, "\(got)")
        #expect(got.contains("\(p)/gateways/gw-a/status online"), "\(got)")
        // A later subscriber on the central broker still gets the status: it is retained there.
        let retained = try DeployCommand.run("mosquitto_sub", aggregator + ["-v", "-W", "2", "-C", "1", "-t", "\(p)/gateways/gw-a/status"])
        #expect(retained.lines == ["\(p)/gateways/gw-a/status online"], "\(retained)")

        // Central → site: the aggregator's ack reaches the gateway's session on the site broker.
        // The bridge account itself may not write acks (it only carries the aggregator's).
        let asBridge = try central.connection(bridgeUser, tls: true)
        try central.publish(asBridge, topic: "\(p)/gateways/gw-a/ack", "forged-by-bridge")
        try central.publish(asBridge, topic: "\(p)/gateways/gw-a/ack/1", "forged-by-bridge")
        try central.publish(aggregator, topic: "\(p)/gateways/gw-a/ack", "ack-1")
        try central.publish(aggregator, topic: "\(p)/gateways/gw-a/ack/1", "shard-ack-1")
        var acks: [String] = []
        for _ in 0..<10 where acks.count < 2 {
            acks += try site.collect(gatewayA, clientID: "gw-a", topics: gatewayTopics)
        }
        #expect(acks.sorted() == ["\(p)/gateways/gw-a/ack ack-1", "\(p)/gateways/gw-a/ack/1 shard-ack-1"])
        // Nor may it write device state or another site's batches.
        try central.openSession(reader, clientID: "app", topics: ["\(p)/devices/#", "waymark/v1/other/#"])
        try central.publish(asBridge, topic: "\(p)/devices/mac:aa-bb-cc-dd-ee-ff/state", "forged-state")
        try central.publish(asBridge, topic: "waymark/v1/other/gateways/gw-a/sightings", "other-site")
        #expect(try central.collect(reader, clientID: "app", topics: ["\(p)/devices/#", "waymark/v1/other/#"]).isEmpty)
    }

    @Test("the pipeline through two bridged brokers: every batch stored once and acked, with the central broker restarted mid-stream",
          .enabled(if: AggregatorTestServices.shouldRun))
    func pipelineThroughTheBridge() throws {
        let db = try PostgresTestDatabase("bridge_pipeline")
        defer { db.drop() }
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(try db.connect())
        let siteID = "bridge-\(UInt32.random(in: 0...UInt32.max))"
        let sitePath = try aggregatorTempFile("site.yaml", AggregatorTestVenue.yaml(site: siteID, count: 4))
        let site = try SiteLoader.load(path: sitePath).site
        let dir = URL(fileURLWithPath: sitePath).deletingLastPathComponent()

        // Two private brokers (anonymous, as in the other pipeline tests); the site broker bridges
        // into the central one over a plain link, with the configuration the script writes.
        let central = try PlainBroker(directory: dir.appendingPathComponent("central"))
        defer { central.stop() }
        let made = try DeployCommand.run(DeployEnvironment.script("deploy/mosquitto/make-bridge-config.sh"), [
            "--plain", "--remote", "127.0.0.1:\(central.port)", sitePath, dir.appendingPathComponent("bridge").path,
        ])
        try #require(made.status == 0, "make-bridge-config.sh failed: \(made)")
        let siteBroker = try PlainBroker(directory: dir.appendingPathComponent("site"),
                                         include: dir.appendingPathComponent("bridge/waymark-bridge-\(siteID).conf"))
        defer { siteBroker.stop() }
        try #require(siteBroker.waitForLog("Connecting bridge"), "the site broker did not start its bridge:\n\(siteBroker.log)")

        var config = AggregatorTestRun.config(site: sitePath, mqtt: central.url, database: db.url, clientID: "agg-\(siteID)")
        config.rawSightings = true
        let run = AggregatorTestRun(config: config, site: site)
        #expect(run.waitUntilReady())

        // The simulated gateways publish to the site broker at 40× (10 simulated minutes in 15 s).
        let waymark = try DemoTests.binary("waymark", repo: DeployEnvironment.repositoryRoot)
        let start = String(Int(Date().timeIntervalSince1970) - 900)
        let common = [waymark, "simulate", "--site", sitePath, "--devices", "12", "--duration", "10m", "--seed", "5",
                      "--start", start, "--quiet"]
        let simLog = dir.appendingPathComponent("simulate.log").path
        let sim = try AggregatorChild.spawn(common + [
            "--publish", siteBroker.url, "--speedup", "40", "--sightings", dir.path + "/s.jsonl", "--ack-wait", "120",
            "--resend-after", "5",
        ], output: simLog)
        // The central broker goes away for 3 s in the middle: batches queue on the site broker
        // (and stay in the gateways' spools until acked), acks wait for the bridge.
        Thread.sleep(forTimeInterval: 5)
        #expect(sim.isRunning, "the simulation ended before the central broker's restart")
        central.stop(removing: false)
        Thread.sleep(forTimeInterval: 3)
        try central.start()
        let status = sim.wait()
        #expect(central.log.components(separatedBy: "running").count - 1 == 2, "the central broker was not restarted:\n\(central.log)")
        #expect(siteBroker.log.contains("Connecting bridge"), "\(siteBroker.log)")
        let simOutput = (try? String(contentsOfFile: simLog, encoding: .utf8)) ?? ""
        #expect(status == 0, "waymark simulate --publish failed:\n\(simOutput)")
        #expect(run.stop())

        let file = try AggregatorProcesses.run(common + ["--sightings", dir.path + "/s2.jsonl", "--batches", dir.path + "/b.jsonl"])
        #expect(file.status == 0, "\(file.output)")
        let expected = try String(contentsOfFile: dir.path + "/b.jsonl", encoding: .utf8).split(separator: "\n")
            .map { try JSONDecoder().decode(SightingBatch.self, from: Data($0.utf8)) }
        #expect(simOutput.contains("unacked at the end 0"), "\(simOutput)")
        let conn = try db.connect()
        let stored = try conn.query("""
            SELECT coalesce(sum(batches), 0)::int8, coalesce(sum(sightings), 0)::int8
            FROM gateway_ingest_hourly WHERE site_id = $1
            """, [siteID]).first
        #expect(try stored?.int(0) == expected.count, "batches stored vs sent; simulator: \(simOutput)")
        #expect(try stored?.int(1) == expected.reduce(0) { $0 + $1.sightings.count })
        let raw = try conn.query("SELECT count(*)::int8 FROM sightings WHERE site_id = $1", [siteID]).first?.int(0)
        #expect(raw == expected.reduce(0) { $0 + $1.sightings.count }, "raw sighting rows: no loss, no duplicates")
        #expect(try conn.query("SELECT count(*)::int8 FROM visits WHERE site_id = $1", [siteID]).first?.int(0) ?? 0 > 0)
    }
}

/// A private anonymous Mosquitto on a free loopback port, with persistence (so a restart keeps
/// the aggregator's and the bridge's sessions) and optionally one more configuration file.
final class PlainBroker: @unchecked Sendable {
    let directory: URL
    let port: Int
    private var child: AggregatorChild?
    var url: String { "mqtt://127.0.0.1:\(port)" }
    var logFile: URL { directory.appendingPathComponent("mosquitto.log") }
    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    init(directory: URL, include: URL? = nil) throws {
        self.directory = directory
        port = try LocalPort.free()
        let data = directory.appendingPathComponent("data"), confD = directory.appendingPathComponent("conf.d")
        for d in [data, confD] { try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true) }
        if let include { try FileManager.default.copyItem(at: include, to: confD.appendingPathComponent(include.lastPathComponent)) }
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        if getuid() == 0 {  // mosquitto drops privileges to `mosquitto` before writing these
            for path in [data.path, logFile.path] {
                try FileManager.default.setAttributes([.ownerAccountName: "mosquitto"], ofItemAtPath: path)
            }
        }
        try """
            listener \(port) 127.0.0.1
            allow_anonymous true
            persistence true
            persistence_location \(data.path)/
            max_queued_messages 100000
            log_dest file \(logFile.path)
            log_type error
            log_type warning
            log_type notice
            log_type information
            include_dir \(confD.path)

            """.write(to: directory.appendingPathComponent("mosquitto.conf"), atomically: true, encoding: .utf8)
        try start()
    }

    func start() throws {
        let before = log.components(separatedBy: "running").count
        child = try AggregatorChild.spawn([try #require(DeployEnvironment.tool("mosquitto")), "-c",
                                           directory.appendingPathComponent("mosquitto.conf").path], output: "/dev/null",
                                   cleanSignals: true)
        for _ in 0..<200 {
            if log.components(separatedBy: "running").count > before { return }
            usleep(25_000)
        }
        Issue.record("mosquitto did not start; its log:\n\(log)")
        throw DeployBrokerError.notStarted
    }

    func waitForLog(_ text: String, timeout: Double = 10) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if log.contains(text) { return true }
            usleep(50_000)
        }
        return false
    }

    /// SIGTERM (Mosquitto saves its persistence file; SIGKILL if it has not exited after 10 s), then
    /// the files are removed unless asked not to.
    func stop(removing: Bool = true) {
        if let child, child.isRunning {
            child.signal(SIGTERM)
            let deadline = Date(timeIntervalSinceNow: 10)
            while child.isRunning && Date() < deadline { usleep(20_000) }
            if child.isRunning {
                Issue.record("mosquitto did not stop on SIGTERM within 10 s; killed")
                child.signal(SIGKILL)
            }
            child.wait()
        }
        child = nil
        if removing { try? FileManager.default.removeItem(at: directory) }
    }
}
