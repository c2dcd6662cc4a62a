import Foundation
import Testing
import WaymarkConfig
import WaymarkCore
import WaymarkEdge
import WaymarkMQTT

/// Runs an ``EdgeAgent`` in-process against a broker, and a test subscriber that records every
/// batch and (optionally) acks like the aggregator does.
enum EdgeHarness {
    static var capture2x: String { EdgeTestEnvironment.sharedData("ruuvitag-sensor-hcidump/hcidump-2.x.txt").path }
    static var decoded2x: String { EdgeTestEnvironment.sharedData("ruuvitag-sensor-hcidump/hcidump-2.x.decoded.jsonl").path }
    static let trackedMACs = ["14:BB:6E:A6:5E:51", "D0:03:DF:91:50:EB", "C5:0D:FA:99:CB:9E"]

    static func site() throws -> Site {
        try SiteLoader.parse(yaml: """
        site: edge-it
        gateways:
          - id: gw1
            position: [0, 0]
        regions:
          - id: r1
            gateways: [gw1]
        tracking:
          macs: [\(trackedMACs.map { "\"\($0)\"" }.joined(separator: ", "))]
        """).site
    }

    static func config(broker: String, prefix: String, spool: String) -> EdgeConfig {
        var c = EdgeConfig(sitePath: "edge-it.yaml", gateway: "gw1")
        c.mqtt.url = broker
        c.mqtt.clientID = "edge-it-\(UUID().uuidString.prefix(8))"
        c.topicPrefix = prefix
        c.spoolDir = spool
        c.spoolFsync = false
        c.spoolResendAfterS = 1
        c.mqtt.reconnectMinS = 1
        c.mqtt.reconnectMaxS = 1
        c.statusIntervalS = 1
        c.metricsPort = 0
        return c
    }

    static func temporaryDirectory(_ name: String) -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-\(name)-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }
}

/// An agent running in a task; `stop()` shuts it down gracefully and waits.
final class RunningAgent: Sendable {
    let agent: EdgeAgent
    let task: Task<Void, any Error>

    convenience init(_ config: EdgeConfig, source: any SightingSource) throws {
        self.init(agent: try EdgeAgent(config: config, site: try EdgeHarness.site(), source: source))
    }

    init(agent: EdgeAgent) {
        self.agent = agent
        self.task = Task { try await agent.run() }
    }

    func stop() async throws {
        agent.requestStop()
        try await task.value
    }
}

/// Subscribes to a gateway's sightings and status; records batches; acks each batch when `acking`.
final class BatchCollector: @unchecked Sendable {
    let client: MQTTClient
    let topics: Topics
    private let lock = NSLock()
    private var _batches: [SightingBatch] = []
    private var _statuses: [GatewayStatus] = []
    private var _acking: Bool

    init(broker: String, prefix: String, acking: Bool) throws {
        topics = Topics(prefix: prefix)
        _acking = acking
        client = try MQTTClient(.init(clientID: "collector-\(UUID().uuidString.prefix(8))", reconnectDelay: 1, reconnectDelayMax: 1))
        let ackTopic = topics.ack("gw1"), sightings = topics.sightings("gw1"), status = topics.status("gw1")
        client.onMessage = { [weak self] m in
            guard let self else { return }
            if m.topic == sightings, let batch = try? JSONDecoder().decode(SightingBatch.self, from: Data(m.payload)) {
                let ack = self.lock.withLock { () -> Bool in self._batches.append(batch); return self._acking }
                if ack, let payload = try? JSONEncoder().encode(GatewayAck(boot: batch.boot, seq: batch.seq)) {
                    _ = try? self.client.publish(topic: ackTopic, payload: Array(payload), qos: 1)
                }
            } else if m.topic == status, let s = try? JSONDecoder().decode(GatewayStatus.self, from: Data(m.payload)) {
                self.lock.withLock { self._statuses.append(s) }
            }
        }
        try client.subscribe(sightings, qos: 1)
        try client.subscribe(status, qos: 1)
        try client.connect(MQTTConnection(url: broker))
    }

    var batches: [SightingBatch] { lock.withLock { _batches } }
    var statuses: [GatewayStatus] { lock.withLock { _statuses } }
    var acking: Bool {
        get { lock.withLock { _acking } }
        set { lock.withLock { _acking = newValue } }
    }

    /// Distinct (boot, seq) received.
    var keys: Set<String> { Set(batches.map { "\($0.boot)/\($0.seq)" }) }

    func ack(boot: String, seq: UInt64) throws {
        try client.publish(topic: topics.ack("gw1"), payload: Array(try JSONEncoder().encode(GatewayAck(boot: boot, seq: seq))), qos: 1)
    }

    func close() { client.close() }
}

/// Polls `condition` every 50 ms without blocking the cooperative pool.
func eventually(timeout: Double, _ condition: () -> Bool) async -> Bool {
    // Only time spent polling counts against the timeout: while other tests' blocking work holds
    // every thread of Swift's cooperative pool, neither this task nor the agents it waits for
    // (they run on the same pool) are scheduled, and a stall of minutes on a loaded machine must
    // not use the budget up before they have run at all. A wake-up later than 1 s counts as 1 s.
    var remaining = timeout
    var last = Date()
    while remaining > 0 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
        let now = Date()
        remaining -= min(now.timeIntervalSince(last), 1)
        last = now
    }
    return condition()
}
