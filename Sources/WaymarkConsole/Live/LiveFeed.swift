import Foundation
import Logging
import WaymarkMQTT

/// Subscribes to the aggregator's device states and the gateways' status on the broker and feeds
/// them into a `LiveHub`. libmosquitto's network thread delivers; the hub only copies the message in.
public final class LiveFeed: Sendable {
    private let client: MQTTClient
    public let hub: LiveHub

    /// Connects in the background (a broker that is down is retried with backoff and logged).
    public init(hub: LiveHub, settings: MQTTSettings, logger: Logger) throws {
        let clientID = settings.clientID ?? "waymark-console-\(UInt32.random(in: 0...UInt32.max))"
        let client = try MQTTClient(settings.clientOptions(clientID: clientID, cleanSession: true, maxQueued: 0))
        self.client = client
        self.hub = hub
        client.onMessage = { message in
            if let cause = hub.apply(topic: message.topic, payload: message.payload, retained: message.retain,
                                     receivedAt: Date().timeIntervalSince1970) {
                logger.notice("ignoring a message from the broker (logged once per cause)", metadata: ["reason": .string(cause)])
            }
        }
        client.onEvent = { event in
            switch event {
            case .connected: logger.info("connected to the broker")
            case .refused(let error): logger.error("the broker refused the connection: \(error)")
            case .disconnected(let expected, let reason):
                if !expected { logger.warning("disconnected from the broker; reconnecting: \(reason)") }
            }
        }
        for topic in hub.topics { _ = try client.subscribe(topic, qos: 0) }
        try client.connect(try settings.connection())
    }

    public func close() { client.close() }
}
