import Foundation
import Logging
import Prometheus
import WaymarkCore
import WaymarkHomeAssistant
import WaymarkMQTT
import WaymarkService

/// `waymark homeassistant` at run time: one MQTT connection with a last will on its status topic,
/// and a loop thread that feeds ``HomeAssistantBridge`` the aggregator's device states and
/// publishes what it returns.
///
/// On every connection it announces itself online and republishes every configuration and state
/// (a broker restarted without persistence has lost its retained messages). After the first it
/// also waits `cleanup_wait_s` for the retained configurations of earlier runs and removes those no
/// longer wanted.
///
/// `@unchecked Sendable`: `bridge` and the counters are used by the loop thread only; `stopping`
/// and `connections` are guarded by `lock`; the MQTT client is thread-safe.
final class HomeAssistantService: @unchecked Sendable {
    let config: HomeAssistantConfig
    let logger: Logger
    private var bridge: HomeAssistantBridge
    private let client: MQTTClient
    private let inbox = MessageInbox()
    private let metrics: HomeAssistantMetrics
    private let lock = NSLock()
    private var stopping = false
    private var connections = 0
    private var published = 0, failures = 0, removed = 0
    private var loggedMalformed = false

    init(config: HomeAssistantConfig, site: Site, logger: Logger, registry: PrometheusCollectorRegistry) throws {
        self.config = config
        self.logger = logger
        var settings = HomeAssistantSettings(topicPrefix: config.topicPrefix ?? "waymark/v1/\(site.id)")
        settings.discoveryPrefix = config.discoveryPrefix
        settings.devices = config.devices
        settings.regions = config.regions
        settings.gateways = config.gateways
        settings.version = ServiceLaunch.version
        bridge = HomeAssistantBridge(site: site, settings: settings)
        metrics = HomeAssistantMetrics(registry: registry)
        let clientID = config.mqtt.clientID ?? "waymark-homeassistant-\(site.id)"
        client = try MQTTClient(config.mqtt.clientOptions(clientID: clientID, cleanSession: true, maxQueued: 0))
    }

    func stop() { lock.withLock { stopping = true } }
    private var isStopping: Bool { lock.withLock { stopping } }

    func run() throws {
        let names = bridge.names
        let inbox = self.inbox
        client.onMessage = { inbox.push($0) }
        client.onEvent = { [self, logger] event in
            switch event {
            case .connected:
                lock.withLock { connections += 1 }
                logger.info("connected to the broker")
            case .refused(let error): logger.error("the broker refused the connection: \(error)")
            case .disconnected(let expected, let reason):
                if !expected { logger.warning("disconnected from the broker; reconnecting: \(reason)") }
            }
        }
        for pattern in bridge.subscriptions { try client.subscribe(pattern, qos: 1) }
        var connection = try config.mqtt.connection()
        connection.will = .init(topic: names.bridgeStatus, payload: status(.offline), qos: 1, retain: true)
        try client.connect(connection)
        logger.info("publishing Home Assistant discovery", metadata: [
            "discovery_prefix": .string(config.discoveryPrefix), "node_id": .string(names.nodeID),
            "devices": .stringConvertible(config.devices.count), "topics": .string(names.topics.prefix),
        ])
        loop()
        publish([.init(topic: names.bridgeStatus, payload: status(.offline), retain: true)])
        let deadline = Date().addingTimeInterval(3)
        while client.isConnected && client.unacknowledgedCount > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        client.close()
        logger.info("stopped", metadata: ["published": .stringConvertible(published), "removed": .stringConvertible(removed)])
    }

    private func loop() {
        var handledConnections = 0
        var cleanupAt: Double?
        var lastFlush = 0.0
        while !isStopping {
            let now = Date().timeIntervalSince1970
            let seen = lock.withLock { connections }
            if seen > handledConnections {
                // (Re)connected: announce, then republish everything once the retained messages are in.
                handledConnections = seen
                publish([.init(topic: bridge.names.bridgeStatus, payload: status(.online), retain: true)])
                cleanupAt = now + config.cleanupWaitS
            }
            if let item = inbox.pop(timeout: 0.05) {
                let out = bridge.handle(topic: item.message.topic, payload: item.message.payload)
                // Until the first full publication, states only update the model.
                if cleanupAt == nil { publish(out) }
                if bridge.malformedStates > 0 && !loggedMalformed {
                    loggedMalformed = true
                    logger.warning("a device state is not the aggregator's JSON; it is ignored (counted in waymark_homeassistant_malformed_states_total)")
                }
            }
            if let due = cleanupAt, Date().timeIntervalSince1970 >= due {
                cleanupAt = nil
                let removals = bridge.staleRemovals()
                if !removals.isEmpty {
                    logger.info("removing entities no longer configured", metadata: ["messages": .stringConvertible(removals.count)])
                }
                removed += removals.count
                publish(removals)
                publish(bridge.everything())
            }
            if cleanupAt == nil && now - lastFlush >= 0.5 {
                publish(bridge.takeOccupancy())
                lastFlush = now
                metrics.update(.init(published: published, failures: failures, removed: removed, statesRead: bridge.statesRead,
                                     malformed: bridge.malformedStates, connected: client.isConnected))
            }
        }
    }

    private func publish(_ items: [HAPublication]) {
        for p in items {
            do {
                try client.publish(topic: p.topic, payload: p.payload, qos: 1, retain: p.retain)
                published += 1
            } catch {
                failures += 1
            }
        }
    }

    private func status(_ state: GatewayStatus.State) -> [UInt8] {
        let s = ServiceStatus(state: state, service: "waymark-homeassistant", site: bridge.site.id, version: ServiceLaunch.version,
                              t: state == .online ? Date().timeIntervalSince1970 : nil)
        return s.jsonBytes
    }
}
