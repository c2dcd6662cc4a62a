import Crypto
import Foundation
import Testing
import WaymarkAggregator
import WaymarkCore
import WaymarkMQTT
import WaymarkPostgres
import WaymarkReports

/// Issue 15 end to end: the real aggregator, broker and database, and a local webhook receiver.
/// Devices walk a line of regions while the aggregator is killed (SIGKILL) three times mid-stream
/// and the receiver answers 503 for its first minute. Every notification `waymark replay` computes
/// from the same batches must be in the table exactly once, on both MQTT topics, and at the
/// webhook with a valid signature once the receiver is back.
@Suite("Notification delivery (broker, database, webhook)", .enabled(if: AggregatorTestServices.shouldRun), .serialized)
struct NotificationDeliveryTests {
    static let secret = "integration-test-webhook-secret-0123"

    static func rules(webhook: String) -> String {
        """
        notifications:
          - { id: hello, when: enter, match: { regions: [r2] }, webhook: "\(webhook)", message: "Hello {device} in {region_name}" }
          - { id: bye, when: exit, match: { regions: [r2] }, webhook: "\(webhook)", message: "Bye after {dwell}", data: { n: 1 } }
          - { id: linger, when: dwell, dwell_s: 20, match: { ibeacons: ["\(AggregatorTestVenue.uuid):1:3"] } }
        """
    }

    @Test func killedAggregatorAndFailingReceiverNeitherRepeatNorLose() throws {
        let mqtt = try AggregatorTestServices.requireMQTT()
        let db = try PostgresTestDatabase("notify_kill")
        defer { db.drop() }
        try PostgresMigrator(directory: repositorySchemaDirectory).migrate(try db.connect())
        let receiver = try WebhookReceiver(failFor: 60)
        defer { receiver.close() }
        let siteID = "notify-\(UInt32.random(in: 0...UInt32.max))"
        let regions = 6
        let siteYAML = AggregatorTestVenue.yaml(site: siteID, count: regions) + Self.rules(webhook: receiver.url)
        let sitePath = try aggregatorTempFile("site.yaml", siteYAML)
        let dir = URL(fileURLWithPath: sitePath).deletingLastPathComponent()
        let log = sitePath + ".log"
        let records = AggregatorTestVenue.records(devices: 12, path: [0, 1, 2, 3, 4, 5, 4, 3], dwell: 30,
                                                  start: Date().timeIntervalSince1970 - 3600, regions: regions)
        let batches = AggregatorTestVenue.batches(records, boot: "boot-n")
        let topics = Topics(site: siteID)

        // What `waymark replay` computes from the same batches: the notifications to expect.
        let batchesPath = dir.appendingPathComponent("batches.jsonl").path
        let encoder = JSONEncoder()
        try batches.map { String(decoding: try encoder.encode($0), as: UTF8.self) }.joined(separator: "\n")
            .write(toFile: batchesPath, atomically: true, encoding: .utf8)
        let replayOut = dir.appendingPathComponent("replay.jsonl").path
        let waymark = try DemoTests.binary("waymark", repo: DeployEnvironment.repositoryRoot)
        let replay = try AggregatorProcesses.run([waymark, "replay", "--batches", "--site", sitePath, "--input", batchesPath, "--output", replayOut])
        #expect(replay.status == 0, "\(replay.output)")
        let expected = try String(contentsOfFile: replayOut, encoding: .utf8).split(separator: "\n")
            .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["type"] as? String == "notification" }
        let expectedIDs = Set(expected.compactMap { $0["id"] as? String })
        let expectedRules = Dictionary(grouping: expected, by: { $0["rule"] as! String }).mapValues(\.count)
        // Every device passes r2 and stays 30 s in r3 twice: a hello, a goodbye and one dwell each.
        #expect(expectedRules == ["hello": 12, "bye": 12, "linger": 12], "\(expectedRules)")
        #expect(expectedIDs.count == expected.count)

        let watcher = try NotificationWatcher(url: mqtt, topics: topics)
        defer { watcher.close() }
        let arguments = ["--site", sitePath, "--broker", mqtt, "--database", db.url, "--metrics-port", "0",
                         "--set", "mqtt.client_id=agg-\(siteID)", "--set", "database.flush_interval_ms=100",
                         "--set", "clock.tolerance_s=1000000000", "--set", "clock.max_age_s=10000000000",
                         "--set", "ingest.gap_timeout_s=30", "--set", "log.level=warning",
                         "--set", "webhooks.retry_max_s=4", "--set", "webhooks.timeout_s=5"]
        setenv("WAYMARK_AGGREGATOR_WEBHOOKS_SECRET", Self.secret, 1)
        defer { unsetenv("WAYMARK_AGGREGATOR_WEBHOOKS_SECRET") }
        var process = try AggregatorProcesses.launchAggregator(arguments, log: log)
        defer { if process.isRunning { process.signal(SIGKILL); process.wait() } }
        Thread.sleep(forTimeInterval: 1.5)
        let fleet = try AggregatorTestFleet(url: mqtt, topics: topics, name: "fleet-notify")
        defer { fleet.close() }

        // Publish in four parts; SIGKILL the aggregator after each of the first three and restart it.
        let parts = 4, size = (batches.count + parts - 1) / parts
        var storedAtKill: [Int] = []
        for part in 0..<parts {
            for b in batches[(part * size)..<min(batches.count, (part + 1) * size)] { try fleet.publish(b) }
            if part < parts - 1 {
                Thread.sleep(forTimeInterval: 0.4)
                storedAtKill.append(try Self.count(db, siteID))
                process.signal(SIGKILL)
                #expect(process.wait() == 128 + SIGKILL)
                process = try AggregatorProcesses.launchAggregator(arguments, log: log)
            }
        }
        #expect(try fleet.waitUntilAllAcked(timeout: 120, resendEvery: 2))
        #expect(storedAtKill.contains { $0 > 0 }, "some notifications were stored before a kill: \(storedAtKill)")

        // The table: exactly the notifications replay computed, each once.
        let conn = try db.connect()
        let deadline = Date().addingTimeInterval(150)
        func rows() throws -> [String: (rule: String, device: String, webhook: String?, published: Bool)] {
            var out: [String: (String, String, String?, Bool)] = [:]
            for r in try conn.query("""
                SELECT notification_id::text, rule_id, device_id, webhook_status, mqtt_published_at IS NOT NULL
                FROM notifications WHERE site_id = $1
                """, [siteID]).rows {
                out[try r.string(0)] = (try r.string(1), try r.string(2), try r.decode(String?.self, 3), try r.bool(4))
            }
            return out
        }
        var stored = try rows()
        while Date() < deadline && (stored.values.contains { $0.webhook == "pending" || !$0.published } || stored.count < expectedIDs.count) {
            Thread.sleep(forTimeInterval: 0.5)
            stored = try rows()
        }
        #expect(Set(stored.keys) == expectedIDs, "missing: \(expectedIDs.subtracting(stored.keys).count), unexpected: \(Set(stored.keys).subtracting(expectedIDs).count)")
        #expect(stored.values.allSatisfy { $0.published }, "every row confirmed by the broker")
        let webhookRows = stored.filter { $0.value.rule != "linger" }
        #expect(webhookRows.count == 24)
        #expect(webhookRows.values.allSatisfy { $0.webhook == "delivered" }, "\(webhookRows.values.map(\.webhook))")
        #expect(stored.filter { $0.value.rule == "linger" }.values.allSatisfy { $0.webhook == nil })

        // MQTT: each on the site topic and on its device's topic, as stored.
        let heard = watcher.received
        for (id, row) in stored {
            #expect(heard.all[id] != nil, "not on …/notifications: \(row.rule)")
            #expect(heard.byDevice[id] == row.device, "not on …/devices/\(row.device)/notifications")
        }

        // The webhook: down for a minute, then every delivery, each signed.
        let requests = receiver.requests
        let delivered = Set(requests.filter { $0.status == 200 }.compactMap { $0.headers["x-waymark-id"] })
        #expect(delivered == Set(webhookRows.keys))
        #expect(requests.contains { $0.status == 503 }, "the receiver was down while deliveries started")
        for r in requests {
            let timestamp = r.headers["x-waymark-timestamp"] ?? ""
            var mac = HMAC<SHA256>(key: SymmetricKey(data: Array(Self.secret.utf8)))
            mac.update(data: Array((timestamp + ".").utf8) + r.body)
            let hex = mac.finalize().map { String(format: "%02x", $0) }.joined()
            #expect(r.headers["x-waymark-signature"] == "sha256=" + hex)
            let body = try #require(JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any])
            #expect(body["id"] as? String == r.headers["x-waymark-id"])
            #expect(r.headers["content-type"] == "application/json")
        }
        let attempts = try conn.query("""
            SELECT outcome, count(*)::int8, count(*) FILTER (WHERE http_status = 503)::int8 FROM webhook_attempts
            WHERE site_id = $1 GROUP BY outcome
            """, [siteID]).rows.reduce(into: [String: (Int, Int)]()) { $0[try $1.string(0)] = (try $1.int(1), try $1.int(2)) }
        #expect(attempts["delivered"]?.0 == 24, "\(attempts)")
        #expect((attempts["retry"]?.1 ?? 0) > 0, "failed attempts are recorded with their status: \(attempts)")

        // The report: per rule and hour, adding up to the table.
        let runner = try ReportRunner(connection: conn)
        let now = Int64(Date().timeIntervalSince1970)
        let report = try runner.run(ReportRequest(kind: .notifications, from: now - 3 * 3600, to: now + 3600, period: .hour), site: siteID)
        var perRule: [String: Int64] = [:]
        for row in report.rows { perRule[row[1].textValue!, default: 0] += row[3].integerValue! }
        #expect(perRule == ["hello": 12, "bye": 12, "linger": 12])
        #expect(report.values("webhook_delivered").compactMap(\.integerValue).reduce(0, +) == 24)

        process.signal(SIGTERM)
        #expect(process.wait() == 0, "aggregator log: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
    }

    static func count(_ db: PostgresTestDatabase, _ site: String) throws -> Int {
        try db.connect().query("SELECT count(*)::int8 FROM notifications WHERE site_id = $1", [site]).first?.int(0) ?? 0
    }
}

/// Subscribes to the notification topics and records the ids seen on each.
final class NotificationWatcher: @unchecked Sendable {
    let client: MQTTClient
    private let lock = NSLock()
    private var all: [String: Int] = [:]
    private var byDevice: [String: String] = [:]

    init(url: String, topics: Topics) throws {
        client = try MQTTClient(.init(clientID: "notify-watch-\(UInt32.random(in: 0...UInt32.max))"))
        let prefix = topics.prefix
        client.onMessage = { [weak self] m in
            guard let self, let json = try? JSONSerialization.jsonObject(with: Data(m.payload)) as? [String: Any],
                  let id = json["id"] as? String, let device = json["device"] as? String else { return }
            lock.lock()
            if m.topic == prefix + "/notifications" { all[id, default: 0] += 1 }
            if m.topic == prefix + "/devices/\(device)/notifications" { byDevice[id] = device }
            lock.unlock()
        }
        try client.subscribe(prefix + "/notifications", qos: 1)
        try client.subscribe(prefix + "/devices/+/notifications", qos: 1)
        try client.connect(try MQTTConnection(url: url))
        try client.waitUntilConnected(timeout: 10)
    }

    var received: (all: [String: Int], byDevice: [String: String]) {
        lock.lock(); defer { lock.unlock() }
        return (all, byDevice)
    }

    func close() { client.close() }
}
