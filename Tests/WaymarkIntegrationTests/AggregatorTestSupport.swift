import Foundation
import Testing
import WaymarkAggregator
import WaymarkConfig
import WaymarkCore
import WaymarkMQTT
import WaymarkPostgres

/// Mosquitto + PostgreSQL from scripts/test.sh, for the aggregator suites.
enum AggregatorTestServices {
    static var mqttURL: String? { ProcessInfo.processInfo.environment["WAYMARK_MQTT_URL"].flatMap { $0.isEmpty ? nil : $0 } }
    static var shouldRun: Bool { (mqttURL != nil && PostgresTestServer.url != nil) || PostgresTestServer.required }
    static func requireMQTT() throws -> String {
        try #require(mqttURL, "WAYMARK_MQTT_URL is not set: run the tests with scripts/test.sh, which starts Mosquitto")
    }
}

/// A line of regions (see Tests/WaymarkAggregatorTests/LineVenue.swift for the same venue).
enum AggregatorTestVenue {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    static func yaml(site: String, count: Int, monitored: Int = 20) -> String {
        var y = "site: \(site)\ngateways:\n"
        for i in 0..<count { y += "  - { id: gw-\(i), position: [\(Double(i) * 10), 0.0] }\n" }
        y += "regions:\n"
        for i in 0..<count {
            y += "  - { id: r\(i), gateways: [gw-\(i)], radius_m: 3.0\(i == 0 ? ", entrance: true" : ""), ibeacon: { uuid: \"\(uuid)\", major: 1, minor: \(i) } }\n"
        }
        y += "edges:\n"
        for i in 1..<count { y += "  - [r\(i - 1), r\(i)]\n" }
        y += "tracking:\n  ibeacon_uuids: [\"\(uuid)\"]\nfusion:\n  monitored_set_size: \(monitored)\n"
        return y
    }

    static func device(_ n: Int) -> DeviceID { DeviceID.ibeacon(uuid: BeaconUUID(uuid)!, major: 7, minor: UInt16(n)) }

    struct Record { var t: Double; var gateway: Int; var device: DeviceID; var rssi: Double }

    /// Devices walking `path`, `dwell` s per region, heard each second by the region's gateway and
    /// its neighbours; sorted by time.
    static func records(devices: Int, path: [Int], dwell: Int, start: Double, regions: Int) -> [Record] {
        var out: [Record] = []
        var seed: UInt64 = 0x2545_F491_4F6C_DD1D
        for d in 0..<devices {
            var t = start + Double(d) * 7
            for region in path {
                for _ in 0..<dwell {
                    for g in max(0, region - 1)...min(regions - 1, region + 1) {
                        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                        let jitter = Double((seed >> 33) % 600) / 100 - 3
                        out.append(Record(t: t + Double(g - region + 1) * 0.01 + Double(d) * 0.001, gateway: g,
                                          device: device(d), rssi: ((g == region ? -52.0 : -84.0) + jitter).rounded()))
                    }
                    t += 1
                }
            }
        }
        return out.sorted { ($0.t, $0.gateway) < ($1.t, $1.gateway) }
    }

    /// Runs of one gateway's consecutive records become one batch (so batch order = record order).
    static func batches(_ records: [Record], boot: String) -> [SightingBatch] {
        var out: [SightingBatch] = []
        var seq: [Int: UInt64] = [:]
        var i = 0
        while i < records.count {
            var j = i
            while j < records.count && records[j].gateway == records[i].gateway { j += 1 }
            let run = records[i..<j]
            let g = records[i].gateway
            let s = (seq[g] ?? 0) + 1
            seq[g] = s
            out.append(SightingBatch(gateway: "gw-\(g)", boot: boot, seq: s, start: run.first!.t, end: run.last!.t,
                                     sightings: run.map { .init(device: $0.device, count: 1, rssiMax: $0.rssi, rssiMean: $0.rssi,
                                                                rssiLast: $0.rssi, tx: -59, first: $0.t, last: $0.t) }))
            i = j
        }
        return out
    }

    /// An empty batch per gateway at `t` (heartbeats), continuing each gateway's sequence.
    static func heartbeats(after batches: [SightingBatch], gateways: Int, at t: Double, boot: String) -> [SightingBatch] {
        (0..<gateways).map { g in
            let last = batches.last { $0.gateway == "gw-\(g)" }?.seq ?? 0
            return SightingBatch(gateway: "gw-\(g)", boot: boot, seq: last + 1, start: t - 1, end: t, sightings: [])
        }
    }
}

/// Gateways simulated by the test: publishes batches like the edge, keeps them until acked,
/// resends what is unacked (as the edge spool does).
final class AggregatorTestFleet: @unchecked Sendable {
    let client: MQTTClient
    let topics: Topics
    private let lock = NSLock()
    private var acked: [String: GatewayAck] = [:]
    private var unackedPayloads: [String: [(boot: String, seq: UInt64, payload: [UInt8])]] = [:]
    private(set) var ackMessages = 0

    init(url: String, topics: Topics, name: String) throws {
        self.topics = topics
        client = try MQTTClient(.init(clientID: "\(name)-\(UInt32.random(in: 0...UInt32.max))", maxInflight: 500, maxQueued: 0))
        client.onMessage = { [weak self] m in
            guard let self, let (gw, kind) = topics.gateway(inTopic: m.topic), kind == "ack",
                  let ack = try? JSONDecoder().decode(GatewayAck.self, from: Data(m.payload)) else { return }
            lock.lock()
            ackMessages += 1
            if let old = acked[gw], old.boot == ack.boot, old.seq >= ack.seq {} else { acked[gw] = ack }
            unackedPayloads[gw]?.removeAll { $0.boot == ack.boot && $0.seq <= ack.seq }
            lock.unlock()
        }
        try client.subscribe(topics.prefix + "/gateways/+/ack", qos: 1)
        try client.connect(try MQTTConnection(url: url))
        try client.waitUntilConnected(timeout: 10)
    }

    func close() { client.close() }

    /// Publishes `batch` (as `payload` when given: JSONEncoder's member order is not stable, so a
    /// test comparing stored bytes encodes once).
    func publish(_ batch: SightingBatch, payload given: [UInt8]? = nil) throws {
        let payload = try given ?? Array(JSONEncoder().encode(batch))
        lock.lock()
        unackedPayloads[batch.gateway, default: []].append((batch.boot, batch.seq, payload))
        lock.unlock()
        try client.publish(topic: topics.sightings(batch.gateway), payload: payload, qos: 1)
    }

    func publishRaw(gateway: String, payload: [UInt8]) throws {
        try client.publish(topic: topics.sightings(gateway), payload: payload, qos: 1)
    }

    var unackedCount: Int {
        lock.lock(); defer { lock.unlock() }
        return unackedPayloads.values.reduce(0) { $0 + $1.count }
    }

    var acks: [String: GatewayAck] {
        lock.lock(); defer { lock.unlock() }
        return acked
    }

    func resendUnacked() throws {
        lock.lock()
        let pending = unackedPayloads
        lock.unlock()
        for (gw, items) in pending.sorted(by: { $0.key < $1.key }) {
            for item in items { try client.publish(topic: topics.sightings(gw), payload: item.payload, qos: 1) }
        }
    }

    /// Waits until every published batch is acked, resending the unacked ones every `resendEvery` s.
    func waitUntilAllAcked(timeout: Double, resendEvery: Double = 3) throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var nextResend = Date().addingTimeInterval(resendEvery)
        while Date() < deadline {
            if unackedCount == 0 { return true }
            if Date() >= nextResend {
                try resendUnacked()
                nextResend = Date().addingTimeInterval(resendEvery)
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return unackedCount == 0
    }
}

/// An aggregator in this process, on its own thread.
final class AggregatorTestRun: @unchecked Sendable {
    let service: AggregatorService
    private let done = DispatchSemaphore(value: 0)
    private(set) var error: (any Error)?

    init(config: AggregatorConfig, site: Site) {
        service = AggregatorService(config: config, site: site)
        let thread = Thread { [self] in
            do { try service.run() } catch { self.error = error }
            done.signal()
        }
        thread.name = "test-aggregator"
        thread.start()
    }

    /// Waits until the aggregator is connected and subscribed (messages published before that
    /// are not queued for it by the broker; the fleet's resend covers them, but tests are faster
    /// without the wait).
    func waitUntilReady(timeout: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !service.isConnectedToBroker && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        Thread.sleep(forTimeInterval: 0.3)  // SUBACK
        return service.isConnectedToBroker
    }

    /// Stops (SIGTERM path) and waits for `run()` to return.
    func stop(timeout: Double = 60) -> Bool {
        service.stop()
        return done.wait(timeout: .now() + timeout) == .success
    }

    static func config(site path: String, mqtt: String, database: String, clientID: String) -> AggregatorConfig {
        var c = AggregatorConfig(sitePath: path)
        c.mqtt.url = mqtt
        c.mqtt.clientID = clientID
        c.databaseURL = database
        c.flushIntervalMS = 100
        c.publishIntervalMS = 50
        c.metricsPort = 0
        c.retryS = 0.3
        c.gapTimeoutS = 30
        // The test data is an hour old and sent at once: no clock correction, nothing too old.
        c.clock = .recorded
        return c
    }
}

/// Writes `text` to a new temporary file and returns its path.
func aggregatorTempFile(_ name: String, _ text: String) throws -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-agg-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    let path = dir.appendingPathComponent(name).path
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// Subscribes to one device's retained monitored set and records every version received.
final class AggregatorMonitoredWatcher: @unchecked Sendable {
    let client: MQTTClient
    private let lock = NSLock()
    private var received: [[String]] = []
    private var beacons: [[String]] = []

    init(url: String, topic: String) throws {
        client = try MQTTClient(.init(clientID: "watch-\(UInt32.random(in: 0...UInt32.max))"))
        client.onMessage = { [weak self] m in
            guard let self, let json = try? JSONSerialization.jsonObject(with: Data(m.payload)) as? [String: Any],
                  let regions = json["regions"] as? [[String: Any]] else { return }
            let ids = regions.compactMap { $0["region"] as? String }
            let identities = regions.map { r -> String in
                guard let b = r["ibeacon"] as? [String: Any] else { return "none" }
                return "\(b["uuid"] ?? ""):\(b["major"] ?? ""):\(b["minor"] ?? "")"
            }
            lock.lock(); received.append(ids); beacons.append(identities); lock.unlock()
        }
        try client.subscribe(topic, qos: 1)
        try client.connect(try MQTTConnection(url: url))
        try client.waitUntilConnected(timeout: 10)
    }

    var sets: [[String]] { lock.lock(); defer { lock.unlock() }; return received }
    var identities: [[String]] { lock.lock(); defer { lock.unlock() }; return beacons }
    func close() { client.close() }
}
