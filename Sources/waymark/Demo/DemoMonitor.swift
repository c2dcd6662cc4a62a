import Foundation
import WaymarkCore
import WaymarkMQTT

/// Watches the demo's broker as any MQTT client could: counts the batches each gateway publishes
/// and reads the aggregator's acks (the highest committed seq per gateway).
///
/// `@unchecked Sendable`: the counters are written on libmosquitto's thread and read by the demo's
/// loop, always under `lock`; the client is thread-safe.
final class DemoMonitor: @unchecked Sendable {
    private let lock = NSLock()
    private var published: [String: Int] = [:]
    private var acked: [String: UInt64] = [:]
    private let client: MQTTClient
    let topics: Topics

    init(url: String, topics: Topics) throws {
        self.topics = topics
        client = try MQTTClient(.init(clientID: "waymark-demo-monitor-\(getpid())", cleanSession: true))
        let head = topics.prefix + "/gateways/"
        client.onMessage = { [weak self] message in
            guard let self, message.topic.hasPrefix(head) else { return }
            let rest = message.topic.dropFirst(head.count)
            guard let slash = rest.firstIndex(of: "/") else { return }
            let gateway = String(rest[..<slash])
            switch rest[rest.index(after: slash)...] {
            case "sightings":
                self.lock.withLock { self.published[gateway, default: 0] += 1 }
            case "ack":
                guard let ack = try? JSONDecoder().decode(GatewayAck.self, from: Data(message.payload)) else { return }
                self.lock.withLock { self.acked[gateway] = max(self.acked[gateway] ?? 0, ack.seq) }
            default:
                break
            }
        }
        _ = try client.subscribe(head + "+/sightings", qos: 0)
        _ = try client.subscribe(head + "+/ack", qos: 1)
        try client.connect(try MQTTConnection(url: url))
        try client.waitUntilConnected(timeout: 10)
    }

    /// Batches seen on the broker for `gateway` (resends counted once each time they pass).
    func publishedCount(_ gateway: String) -> Int { lock.withLock { published[gateway] ?? 0 } }

    /// The highest seq the aggregator acked for `gateway` (each edge runs one boot, seq from 1).
    func ackedSeq(_ gateway: String) -> Int { lock.withLock { Int(acked[gateway] ?? 0) } }

    func close() { client.close() }
}
