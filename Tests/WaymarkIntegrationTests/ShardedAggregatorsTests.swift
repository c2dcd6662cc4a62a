import Foundation
import Testing
import WaymarkConfig
import WaymarkCore
import WaymarkPostgres
@testable import WaymarkAggregator

/// Two aggregators on the two shards of one site (docs/scaling.md §1), real Mosquitto and
/// PostgreSQL: gateways (`waymark simulate --publish --shards 2`) send one batch per shard and
/// window; each aggregator owns one shard. Behind one broker, and through a site broker bridged
/// into the central one with the generated Mosquitto bridge configuration.
@Suite(.serialized, .enabled(if: AggregatorTestServices.shouldRun))
struct ShardedAggregatorsTests {
    enum Brokers: String, CaseIterable, Sendable { case one, bridged }

    /// Starts `waymark-aggregator` for `site` owning `own` (a `shards.own` value) of `count` shards,
    /// logging to `aggregator-<name>.log` beside the site file; returns it with its log's path.
    static func launch(_ name: String, own: String, count: Int, site: String, siteID: String, broker: String, database: String,
                       logLevel: String = "warning") throws -> (AggregatorChild, String) {
        let log = URL(fileURLWithPath: site).deletingLastPathComponent().appendingPathComponent("aggregator-\(name).log").path
        let child = try AggregatorProcesses.launchAggregator([
            "--site", site, "--broker", broker, "--database", database, "--metrics-port", "0",
            "--set", "mqtt.client_id=agg-\(siteID)-\(name)", "--set", "database.flush_interval_ms=100",
            "--set", "raw_sightings.enabled=true", "--set", "ingest.gap_timeout_s=30", "--set", "log.level=\(logLevel)",
            "--set", "shards.count=\(count)", "--set", "shards.own=\(own)"], log: log)
        return (child, log)
    }

    @Test("two aggregators on two shards: zero loss, zero duplicates; SIGKILL of one leaves the other shard's flow untouched",
          arguments: Brokers.allCases)
    func twoShards(brokers: Brokers) throws {
        let db = try PostgresTestDatabase("shards_\(brokers.rawValue)")
        defer { db.drop() }
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(try db.connect())
        let siteID = "shards-\(UInt32.random(in: 0...UInt32.max))"
        let sitePath = try aggregatorTempFile("site.yaml", AggregatorTestVenue.yaml(site: siteID, count: 5))
        let dir = URL(fileURLWithPath: sitePath).deletingLastPathComponent()
        let layout = ShardLayout(count: 2)!

        // Where the aggregators connect (central) and where the gateways publish (site).
        var brokersToStop: [PlainBroker] = []
        defer { for b in brokersToStop { b.stop() } }
        let central: String, site: String
        switch brokers {
        case .one:
            central = try AggregatorTestServices.requireMQTT()
            site = central
        case .bridged:
            let c = try PlainBroker(directory: dir.appendingPathComponent("central"))
            brokersToStop.append(c)
            let made = try DeployCommand.run(DeployEnvironment.script("deploy/mosquitto/make-bridge-config.sh"), [
                "--plain", "--remote", "127.0.0.1:\(c.port)", sitePath, dir.appendingPathComponent("bridge").path,
            ])
            try #require(made.status == 0, "make-bridge-config.sh failed: \(made)")
            let s = try PlainBroker(directory: dir.appendingPathComponent("site"),
                                    include: dir.appendingPathComponent("bridge/waymark-bridge-\(siteID).conf"))
            brokersToStop.append(s)
            try #require(s.waitForLog("Connecting bridge"), "the site broker did not start its bridge:\n\(s.log)")
            central = c.url
            site = s.url
        }

        func launch(shard: Int, run: String = "") throws -> (AggregatorChild, String) {
            try Self.launch("\(shard)\(run)", own: "\(shard)", count: 2, site: sitePath, siteID: siteID, broker: central, database: db.url)
        }
        let started = try [0, 1].map { try launch(shard: $0) }
        var aggregators = started.map(\.0)
        var logs = started.map(\.1)
        defer { for a in aggregators where a.isRunning { a.signal(SIGKILL); _ = a.wait() } }
        // Home Assistant's view: an allow-listed device in each shard, whose entities follow their
        // own shard's aggregator (docs/home-assistant.md).
        let tracked = (1...64).compactMap { DeviceID("mac:02-00-00-00-00-\(String(format: "%02x", $0))") }
        let inShard = try [0, 1].map { k in try #require(tracked.first { layout.shard(of: $0) == k }) }
        let availability = inShard.map { "waymark/v1/\(siteID)/homeassistant/devices/\($0)/availability" }
        let ha = try WaymarkServiceProcess(["homeassistant", "--site", sitePath, "--broker", central, "--metrics-port", "0",
                                            "--set", "cleanup_wait_s=0.5"] + inShard.flatMap { ["--device", "\($0)"] },
                                           name: "ha-shards-\(brokers.rawValue)")
        defer { _ = ha.stop() }
        for topic in availability {
            #expect(try HomeAssistantIntegrationTests.waitForServiceState(topic, "online", mqtt: central), "\(topic)\n\(ha.output)")
        }

        // The gateways: 10 simulated minutes at 40× (15 s), resending what is not acked.
        let waymark = try DemoTests.binary("waymark", repo: DeployEnvironment.repositoryRoot)
        let start = String(Int(Date().timeIntervalSince1970) - 900)
        let common = [waymark, "simulate", "--site", sitePath, "--devices", "16", "--duration", "10m", "--seed", "7",
                      "--start", start, "--quiet"]
        let simLog = dir.appendingPathComponent("simulate.log").path
        let sim = try AggregatorChild.spawn(common + [
            "--publish", site, "--speedup", "40", "--shards", "2", "--ack-wait", "120", "--resend-after", "3",
        ], output: simLog)

        // SIGKILL the aggregator of shard 1 mid-stream; restart it 3 s later. Meanwhile shard 0's
        // marks must keep advancing and shard 1's must not.
        let conn = try db.connect()
        let marks = { (shard: Int) throws -> Int in
            try conn.query("SELECT coalesce(sum(seq), 0)::int8 FROM gateway_progress WHERE site_id = $1 AND shard = $2",
                           [siteID, shard]).first?.int(0) ?? 0
        }
        Thread.sleep(forTimeInterval: 5)
        #expect(sim.isRunning, "the simulation ended before the kill")
        aggregators[1].signal(SIGKILL)
        #expect(aggregators[1].wait() == 128 + SIGKILL)
        Thread.sleep(forTimeInterval: 0.5)
        let before = (try marks(0), try marks(1))
        Thread.sleep(forTimeInterval: 2.5)
        let after = (try marks(0), try marks(1))
        #expect(after.0 > before.0, "shard 0 stopped while shard 1's aggregator was down: \(before) → \(after)")
        #expect(after.1 == before.1, "shard 1 advanced with its aggregator down: \(before) → \(after)")
        #expect(before.1 > 0, "shard 1 had committed nothing before the kill")
        // Its last will made shard 1's device unavailable in Home Assistant, not shard 0's.
        #expect(try HomeAssistantIntegrationTests.waitForServiceState(availability[1], "offline", mqtt: central, timeout: 5))
        #expect(try HomeAssistantIntegrationTests.serviceState(availability[0], mqtt: central) == "online")
        let restarted = try launch(shard: 1, run: "-again")
        aggregators[1] = restarted.0
        #expect(try HomeAssistantIntegrationTests.waitForServiceState(availability[1], "online", mqtt: central), "\(ha.output)")
        let firstLogOfShard1 = logs[1]
        logs[1] = restarted.1

        let status = sim.wait()
        let simOutput = (try? String(contentsOfFile: simLog, encoding: .utf8)) ?? ""
        #expect(status == 0, "waymark simulate --publish failed:\n\(simOutput)")
        #expect(simOutput.contains("unacked at the end 0"), "\(simOutput)")
        for (k, a) in aggregators.enumerated() {
            a.signal(SIGTERM)
            #expect(a.wait() == 0, "aggregator \(k): \((try? String(contentsOfFile: logs[k], encoding: .utf8)) ?? "")")
        }
        for log in logs + [firstLogOfShard1] {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            #expect(!text.contains("another running aggregator owns shards"), "one owner per shard, yet: \(text)")
        }

        // Every window's batch arrived once per shard; every sighting is stored exactly once.
        let file = try AggregatorProcesses.run(common + ["--sightings", dir.path + "/s2.jsonl", "--batches", dir.path + "/b.jsonl"])
        #expect(file.status == 0, "\(file.output)")
        let expected = try String(contentsOfFile: dir.path + "/b.jsonl", encoding: .utf8).split(separator: "\n")
            .map { try JSONDecoder().decode(SightingBatch.self, from: Data($0.utf8)) }
        let sightings = expected.reduce(0) { $0 + $1.sightings.count }
        try AggregatorResilienceTests.expectExactlyOnce(conn, site: siteID, records: sightings, batches: expected.count * 2)
        // Each aggregator checkpointed to its own row; each shard's devices have history.
        let rows = try conn.query("SELECT shards FROM aggregator_state WHERE site_id = $1 ORDER BY shards", [siteID]).rows
        #expect(try rows.map { try $0.string(0) } == ["0/2", "1/2"])
        let devices = try conn.query("SELECT DISTINCT device_id FROM visits WHERE site_id = $1", [siteID]).rows
            .compactMap { DeviceID(try $0.string(0)) }
        #expect(Set(devices.map(layout.shard(of:))) == [0, 1], "visits of both shards' devices")
        // Only shard 0's owner records the gateways' status history: no status twice.
        let doubled = try conn.query("""
            SELECT count(*)::int8 FROM (SELECT 1 FROM gateway_status WHERE site_id = $1
            GROUP BY gateway_id, state, boot, reported_at HAVING count(*) > 1) d
            """, [siteID]).first?.int(0)
        #expect(doubled == 0)
    }

    @Test("moving a shard is stop-then-start: the new owners restore the moved devices and marks, nothing is lost or stored twice")
    func moveAShard() throws {
        let mqtt = try AggregatorTestServices.requireMQTT()
        let db = try PostgresTestDatabase("shards_move")
        defer { db.drop() }
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(try db.connect())
        let siteID = "move-\(UInt32.random(in: 0...UInt32.max))"
        let sitePath = try aggregatorTempFile("site.yaml", AggregatorTestVenue.yaml(site: siteID, count: 5))
        let dir = URL(fileURLWithPath: sitePath).deletingLastPathComponent()
        func launch(_ name: String, own: String) throws -> (AggregatorChild, String) {
            try Self.launch(name, own: own, count: 2, site: sitePath, siteID: siteID, broker: mqtt, database: db.url, logLevel: "info")
        }
        // One aggregator owns both shards; mid-stream it is stopped and the shards go to two.
        let (first, firstLog) = try launch("both", own: "0,1")
        defer { if first.isRunning { first.signal(SIGKILL); _ = first.wait() } }
        Thread.sleep(forTimeInterval: 1.5)
        let waymark = try DemoTests.binary("waymark", repo: DeployEnvironment.repositoryRoot)
        let start = String(Int(Date().timeIntervalSince1970) - 900)
        let common = [waymark, "simulate", "--site", sitePath, "--devices", "16", "--duration", "10m", "--seed", "11",
                      "--start", start, "--quiet"]
        let simLog = dir.appendingPathComponent("simulate.log").path
        let sim = try AggregatorChild.spawn(common + [
            "--publish", mqtt, "--speedup", "40", "--shards", "2", "--ack-wait", "120", "--resend-after", "3",
        ], output: simLog)
        Thread.sleep(forTimeInterval: 6)
        #expect(sim.isRunning, "the simulation ended before the move")
        first.signal(SIGTERM)
        #expect(first.wait() == 0, "\((try? String(contentsOfFile: firstLog, encoding: .utf8)) ?? "")")
        let (zero, zeroLog) = try launch("zero", own: "0")
        let (one, oneLog) = try launch("one", own: "1")
        defer { for a in [zero, one] where a.isRunning { a.signal(SIGKILL); _ = a.wait() } }

        let status = sim.wait()
        let simOutput = (try? String(contentsOfFile: simLog, encoding: .utf8)) ?? ""
        #expect(status == 0 && simOutput.contains("unacked at the end 0"), "\(simOutput)")
        for (a, log) in [(zero, zeroLog), (one, oneLog)] {
            a.signal(SIGTERM)
            #expect(a.wait() == 0, "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }

        let file = try AggregatorProcesses.run(common + ["--sightings", dir.path + "/s2.jsonl", "--batches", dir.path + "/b.jsonl"])
        #expect(file.status == 0, "\(file.output)")
        let expected = try String(contentsOfFile: dir.path + "/b.jsonl", encoding: .utf8).split(separator: "\n")
            .map { try JSONDecoder().decode(SightingBatch.self, from: Data($0.utf8)) }
        let conn = try db.connect()
        try AggregatorResilienceTests.expectExactlyOnce(conn, site: siteID, records: expected.reduce(0) { $0 + $1.sightings.count },
                                                        batches: expected.count * 2)
        let rows = try conn.query("SELECT shards FROM aggregator_state WHERE site_id = $1 ORDER BY shards", [siteID]).rows
        #expect(try rows.map { try $0.string(0) } == ["", "0/2", "1/2"], "the whole-site row, then one per new owner")
        // Each new owner took its own shard's devices from the checkpoints the first one left.
        let layout = ShardLayout(count: 2)!
        let heard = try conn.query("SELECT device_id FROM devices WHERE site_id = $1", [siteID]).rows
            .compactMap { DeviceID(try $0.string(0)) }
        for (k, log) in [zeroLog, oneLog].enumerated() {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            let line = text.split(separator: "\n").first { $0.contains("restored") } ?? ""
            let restored = line.firstMatch(of: /devices=(\d+)/).flatMap { Int($0.1) }
            #expect((restored ?? 0) > 0, "shard \(k)'s owner restored no device: \(line)")
            #expect((restored ?? 0) <= heard.filter { layout.shard(of: $0) == k }.count, "only shard \(k)'s devices: \(line)")
            // Nor does a move send the venue calibration back to the site file's values: each new
            // owner started from what the whole-site aggregator had learned.
            #expect(text.contains("its venue calibration starts from the one the site's last other aggregator saved")
                    && text.contains("from_shards=all"), "\(text)")
        }
        let learned = try conn.query("""
            SELECT shards, (state->'calibration'->'calibration'->>'updates')::float8 FROM aggregator_state WHERE site_id = $1 ORDER BY shards
            """, [siteID]).rows.map { (try $0.string(0), try $0.decode(Double.self, 1)) }
        #expect(learned.count == 3 && learned[0].1 > 0, "\(learned)")
        for (key, updates) in learned.dropFirst() { #expect(updates > learned[0].1, "\(key) went on from the whole site's \(learned[0].1): \(updates)") }
    }

    @Test("two running aggregators that own the same shard find out from each other's status and say so")
    func twoOwnersOfOneShard() throws {
        let mqtt = try AggregatorTestServices.requireMQTT()
        let db = try PostgresTestDatabase("shards_double")
        defer { db.drop() }
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(try db.connect())
        let siteID = "double-\(UInt32.random(in: 0...UInt32.max))"
        let sitePath = try aggregatorTempFile("site.yaml", AggregatorTestVenue.yaml(site: siteID, count: 3))
        func launch(_ name: String, own: String) throws -> (AggregatorChild, String) {
            try Self.launch(name, own: own, count: 4, site: sitePath, siteID: siteID, broker: mqtt, database: db.url)
        }
        let runs = [try launch("a", own: "0-2"), try launch("b", own: "2,3"), try launch("c", own: "1")]
        defer { for (a, _) in runs where a.isRunning { a.signal(SIGKILL); _ = a.wait() } }
        let warned = { (log: String) -> Bool in
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("another running aggregator owns shards this one owns")
        }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline && !runs.allSatisfy({ warned($0.1) }) { Thread.sleep(forTimeInterval: 0.2) }
        for (a, log) in runs {
            #expect(warned(log), "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            a.signal(SIGTERM)
            #expect(a.wait() == 0)
        }
        // a and b share shard 2, a and c shard 1: each names what it shares.
        let text = (try? String(contentsOfFile: runs[1].1, encoding: .utf8)) ?? ""
        #expect(text.contains("shared=2"), "\(text)")
    }
}
