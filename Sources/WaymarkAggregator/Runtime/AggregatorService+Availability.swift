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
        let status = ServiceStatus(state: state, service: "waymark-aggregator", site: site.id, version: Self.availabilityVersion,
                                   t: state == .online ? Date().timeIntervalSince1970 : nil)
        return status.jsonBytes
    }
}
