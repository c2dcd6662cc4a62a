import Foundation
import Logging
import Prometheus
import WaymarkBridge
import WaymarkCore
import WaymarkMQTT
import WaymarkService

/// `waymark bridge` at run time: one MQTT connection that reads the foreign receivers' topics, one
/// per bridged gateway that publishes its batches and retained status with a last will of its own
/// (so the broker marks exactly that gateway offline if the bridge vanishes), and a loop thread
/// that feeds ``ForeignBridge`` and publishes what it returns.
///
/// Delivery is at most once (docs/foreign-gateways.md): a receiver's message is used if the bridge
/// is connected when it comes, and a batch that cannot be handed to the broker is dropped and
/// counted, not kept.
///
/// `@unchecked Sendable`: `engine`, `lastTick` and the log bookkeeping are used by the loop thread
/// only; `stopping` and `reconnected` are guarded by `lock`; the MQTT clients are thread-safe.
final class BridgeService: @unchecked Sendable {
    let config: BridgeConfig
    let site: Site
    let topics: Topics
    let logger: Logger
    let metrics: BridgeMetrics
    private let inbox = MessageInbox()
    private var engine: ForeignBridge
    private let subscriber: MQTTClient
    private var publishers: [String: MQTTClient] = [:]
    private let lock = NSLock()
    private var stopping = false
    private var reconnected = Set<String>()
    private var everConnected = Set<String>()
    private var logged = Set<String>()
    /// Batches that could not be handed to the broker, and publish calls that failed.
    private var unsent = 0, publishFailures = 0, published = 0

    init(config: BridgeConfig, site: Site, logger: Logger, registry: PrometheusCollectorRegistry) throws {
        self.config = config
        self.site = site
        self.logger = logger
        topics = config.topicPrefix.map(Topics.init(prefix:)) ?? Topics(site: site.id)
        var settings = ForeignBridge.Settings()
        settings.windowS = config.windowS
        settings.statusIntervalS = config.statusIntervalS
        settings.receiverSilenceS = config.receiverSilenceS
        settings.espresensePrefix = config.espresensePrefix
        settings.shards = config.shards
        settings.version = "waymark-bridge \(ServiceLaunch.version)"
        engine = ForeignBridge(site: site, settings: settings, secret: config.pseudonymSecret, makeBoot: ServiceLaunch.makeBootID)
        metrics = BridgeMetrics(registry: registry, gateways: engine.gateways)
        let clientID = config.mqtt.clientID ?? "waymark-bridge-\(site.id)"
        subscriber = try MQTTClient(config.mqtt.clientOptions(clientID: clientID, cleanSession: true, maxQueued: 0))
        for gateway in engine.gateways {
            publishers[gateway] = try MQTTClient(config.mqtt.clientOptions(clientID: "\(clientID)-\(gateway)", cleanSession: true, maxQueued: 1000))
        }
    }

    /// Connects and runs until ``stop()``; then publishes the open windows and each gateway's
    /// `offline` status, and disconnects.
    func run() throws {
        let connection = try config.mqtt.connection()
        let inbox = self.inbox
        subscriber.onMessage = { inbox.push($0) }
        subscriber.onEvent = { [logger] event in
            switch event {
            case .connected: logger.info("connected to the broker; reading the foreign receivers' topics")
            case .refused(let error): logger.error("the broker refused the connection: \(error)")
            case .disconnected(let expected, let reason):
                if !expected { logger.warning("disconnected from the broker; readings are lost until it is back: \(reason)") }
            }
        }
        for pattern in engine.router.subscriptions { try subscriber.subscribe(pattern, qos: 1) }
        for (gateway, client) in publishers {
            client.onEvent = { [self] event in
                if case .connected = event { noteConnected(gateway) }
            }
            var c = connection
            c.will = .init(topic: topics.status(gateway), payload: engine.lastWill(for: gateway).jsonBytes, qos: 1, retain: true)
            try client.connect(c)
        }
        try subscriber.connect(connection)
        logger.info("bridging", metadata: [
            "gateways": .string(engine.gateways.joined(separator: ",")), "topics": .string(topics.prefix),
            "subscriptions": .string(engine.router.subscriptions.joined(separator: " ")),
        ])
        loop()
        shutdown()
    }

    func stop() { lock.withLock { stopping = true } }

    private var isStopping: Bool { lock.withLock { stopping } }

    /// Called on a publisher's network thread.
    private func noteConnected(_ gateway: String) {
        lock.withLock {
            if !everConnected.insert(gateway).inserted { _ = reconnected.insert(gateway) }
        }
    }

    private func loop() {
        var lastTick = 0.0, lastMetrics = 0.0
        while !isStopping {
            if let item = inbox.pop(timeout: 0.05) {
                note(engine.receive(topic: item.message.topic, payload: item.message.payload, retained: item.message.retain,
                                    at: item.receivedAt))
            }
            let now = Date().timeIntervalSince1970
            for gateway in lock.withLock({ () -> Set<String> in defer { reconnected.removeAll() }; return reconnected }) {
                engine.reconnected(gateway: gateway)
                logger.info("gateway connection back; a new boot starts", metadata: [LogKey.gateway: .string(gateway)])
            }
            if now - lastTick >= 0.1 {
                publish(engine.tick(now: now))
                lastTick = now
            }
            if now - lastMetrics >= 1 {
                updateMetrics()
                lastMetrics = now
            }
        }
    }

    private func shutdown() {
        publish(engine.finish(now: Date().timeIntervalSince1970))
        updateMetrics()
        let deadline = Date().addingTimeInterval(3)
        while Date() < deadline && publishers.values.contains(where: { $0.isConnected && $0.unacknowledgedCount > 0 }) {
            Thread.sleep(forTimeInterval: 0.02)
        }
        subscriber.close()
        for client in publishers.values { client.close() }
        logger.info("stopped", metadata: ["readings": .stringConvertible(engine.counters.readings),
                                          "batches": .stringConvertible(engine.counters.batches),
                                          "unsent_batches": .stringConvertible(unsent)])
    }

    private func publish(_ outputs: [ForeignBridge.Output]) {
        for output in outputs {
            guard let client = publishers[output.gateway] else { continue }
            switch output {
            case .batch(let batch, let shard):
                guard client.isConnected else {
                    unsent += 1
                    engine.batchNotSent(gateway: batch.gateway)
                    logOnce("unsent-\(batch.gateway)", .warning, "not connected: batches of this gateway are dropped (at most once; no spool) until the connection is back",
                            [LogKey.gateway: .string(batch.gateway)])
                    continue
                }
                do {
                    try client.publish(topic: topics.sightings(batch.gateway, shard: shard), payload: batch.jsonBytes, qos: 1)
                    published += 1
                } catch {
                    publishFailures += 1
                    unsent += 1
                    engine.batchNotSent(gateway: batch.gateway)
                    logOnce("publish-\(batch.gateway)", .warning, "a batch could not be published: \(error)", [LogKey.gateway: .string(batch.gateway)])
                }
            case .status(let status):
                guard client.isConnected else { continue }
                do {
                    try client.publish(topic: topics.status(status.gateway), payload: status.jsonBytes, qos: 1, retain: true)
                } catch {
                    publishFailures += 1
                }
            }
        }
    }

    /// Logs what became of a message, once per cause (never a device id above debug).
    private func note(_ outcome: ForeignBridge.Outcome) {
        switch outcome {
        case .rejected(let receiver, let error):
            logOnce("rejected-\(receiver)-\(error.reason.rawValue)", .warning, "message rejected (\(error.reason.rawValue)): \(error.message); counted in waymark_bridge_rejected_total, logged once",
                    [LogKey.gateway: .string(receiver), LogKey.reason: .string(error.reason.rawValue)])
        case .unmappedRoom(let room):
            logOnce("room-\(room)", .info, "ESPresense room '\(room)' is in no foreign_gateways entry of the site file; its readings are not used",
                    [LogKey.reason: "unmapped"])
        case .filtered(let gateway, let reason):
            logOnce("filtered-\(reason.rawValue)", .info, "readings of devices the site does not track are dropped (\(reason.rawValue)); counted in waymark_bridge_filtered_total",
                    [LogKey.gateway: .string(gateway), LogKey.reason: .string(reason.rawValue)])
        case .status(let gateway):
            logger.debug("receiver status", metadata: [LogKey.gateway: .string(gateway)])
        case .reading, .ignored:
            break
        }
    }

    private func logOnce(_ cause: String, _ level: Logger.Level, _ message: Logger.Message, _ metadata: Logger.Metadata) {
        guard logged.insert(cause).inserted else { return }
        logger.log(level: level, message, metadata: metadata)
    }

    private func updateMetrics() {
        var snapshot = BridgeMetrics.Snapshot()
        snapshot.counters = engine.counters
        snapshot.published = published
        snapshot.unsent = unsent
        snapshot.publishFailures = publishFailures
        snapshot.inboxDropped = inbox.dropped
        snapshot.connected = subscriber.isConnected
        let now = Date().timeIntervalSince1970
        snapshot.online = engine.gateways.filter { engine.state(of: $0, at: now) == .online }.count
        metrics.update(snapshot)
    }
}
