import Foundation
import WaymarkCore
import WaymarkMQTT

/// The aggregator's own retained status on `…/aggregator/status` (docs/aggregator.md): `online`
/// once connected, `offline` as the broker's last will and before a clean stop. Home Assistant
/// (docs/home-assistant.md) and other consumers use it to tell a device that stands still from an
/// aggregator that is gone. With shards, the owner of shard 0 publishes there and every other
/// aggregator on `…/aggregator/status/<its shards>` (`Topics.aggregatorStatus(owning:)`).
extension AggregatorService {
    static let availabilityVersion = "0.1.0"

    var availabilityTopic: String { topics.aggregatorStatus(owning: config.shards.owned) }

    /// `connection` with the `offline` last will.
    func withAvailabilityWill(_ connection: MQTTConnection) -> MQTTConnection {
        var c = connection
        c.will = .init(topic: availabilityTopic, payload: availabilityPayload(.offline), qos: 1, retain: true)
        return c
    }

    /// Publishes `online` (called on every connection) or `offline` (before leaving the broker,
    /// waiting up to two seconds for the broker to take it: a clean disconnect does not trigger the
    /// last will).
    func announceAvailability(_ state: GatewayStatus.State, _ client: MQTTClient?) {
        guard let client else { return }
        do {
            try client.publish(topic: availabilityTopic, payload: availabilityPayload(state), qos: 1, retain: true)
        } catch {
            logger.warning("could not publish the aggregator's \(state.rawValue) status: \(error)")
            return
        }
        guard state == .offline else { return }
        let deadline = Date().addingTimeInterval(2)
        while client.isConnected && client.unacknowledgedCount > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
    }

    func availabilityPayload(_ state: GatewayStatus.State) -> [UInt8] {
        let shards = config.shards
        let status = ServiceStatus(state: state, service: "waymark-aggregator", site: site.id, version: Self.availabilityVersion,
                                   t: state == .online ? Date().timeIntervalSince1970 : nil,
                                   shards: shards.layout.isSharded ? shards.owned : nil,
                                   shardCount: shards.layout.isSharded ? shards.layout.count : nil,
                                   instance: shards.layout.isSharded ? instanceID : nil)
        return status.jsonBytes
    }

    /// The other aggregators' statuses a sharded aggregator follows (its own topic among them).
    var peerStatusTopics: [String] {
        config.shards.layout.isSharded ? [topics.aggregatorStatus, topics.aggregatorStatus + "/+"] : []
    }

    /// Whether `topic` is one of ``peerStatusTopics``.
    func isPeerStatus(_ topic: String) -> Bool {
        config.shards.layout.isSharded
            && (topic == topics.aggregatorStatus || topic.hasPrefix(topics.aggregatorStatus + "/"))
    }

    /// Another running aggregator that owns shards this one owns (or splits the site into another
    /// number of shards) fuses those devices too and writes their history twice: said loudly, once
    /// per other run. Called on libmosquitto's thread.
    func checkPeer(_ payload: [UInt8]) {
        guard let status = try? JSONDecoder().decode(ServiceStatus.self, from: Data(payload)) else { return }
        let shared = config.shards.conflicts(with: status, ownInstance: instanceID)
        guard !shared.isEmpty, let other = status.instance else { return }
        let first = lock.withLock { reportedConflicts.insert(other).inserted }
        guard first else { return }
        metrics.shardConflicts.increment()
        let theirs = (status.shards ?? []).map(String.init).joined(separator: ",")
        logger.error("another running aggregator owns shards this one owns: both fuse those devices and write their history twice; stop one and give each shard one owner (docs/scaling.md §1)",
                     metadata: ["shared": .string(shared.map(String.init).joined(separator: ",")),
                                "theirs": .string("\(theirs) of \(status.shardCount.map(String.init) ?? "?")"),
                                "ours": .string(config.shards.description)])
    }
}
