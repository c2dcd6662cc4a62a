import Foundation
import Logging
import Prometheus
import WaymarkCore
import WaymarkMQTT
import WaymarkService
import ServiceLifecycle

/// The edge agent (DESIGN.md §2): source → ``EdgePipeline`` → ``Spool`` → MQTT, with acks,
/// resends, retained status and metrics. A swift-service-lifecycle `Service`: run it in a
/// `ServiceGroup`; graceful shutdown (SIGTERM/SIGINT) flushes the open window to the spool,
/// publishes the `offline` status and disconnects.
///
/// ## Threads
/// - the source runs on its own thread and calls the ``SightingSink`` methods;
/// - libmosquitto's network thread calls the MQTT handlers, which only queue acks and set flags;
/// - ``run()`` ticks every 50 ms on the cooperative pool: acks, resends, status, metrics.
///
/// `@unchecked Sendable`: all mutable state (pipeline, spool, counters, queues) is guarded by
/// `lock`; the MQTT client is itself thread-safe; `source` and the configuration are immutable.
public final class EdgeAgent: Service, SightingSink, @unchecked Sendable {
    /// Reported in the status.
    public static let version = "0.1.0"

    public let config: EdgeConfig
    public let siteID: String
    public let boot: String
    public let topics: Topics
    let source: any SightingSource
    let client: MQTTClient
    let logger: Logger
    let metrics: EdgeMetrics?

    let lock = NSLock()
    var pipeline: EdgePipeline
    /// One spool and topic pair per shard (one unsharded).
    var lanes: PublishLanes
    var runtime = EdgeRuntimeCounters()
    var scanState: SourceState = .starting
    var statusDirty = true
    var lastStatusAt = 0.0
    var connectedOnce = false
    /// Acks received (their topic tells the lane), applied on the next tick.
    var ackInbox: [(topic: String, payload: [UInt8])] = []
    /// Message ids of batch publishes awaiting PUBACK (status publishes are not counted).
    var batchMessageIDs: Set<Int32> = []
    var sourceFinished = false
    var sourceError: (any Error)?
    var stopRequested = false
    /// Causes already logged (malformed input, bad acks), so each is logged once.
    var loggedCauses: Set<String> = []

    /// Builds the agent; opens the spool (reading back what a previous run left) and creates the
    /// MQTT client. Nothing is connected or started until ``run()``.
    public init(config: EdgeConfig, site: Site, source: any SightingSource, logger: Logger = Logger(label: "waymark.edge"),
                registry: PrometheusCollectorRegistry? = nil, boot: String? = nil) throws {
        guard site.gateway(config.gateway) != nil else {
            throw ConfigLayers.ConfigError(
                "gateway '\(config.gateway)' is not in the site file \(config.sitePath) (known: \(site.gateways.map(\.id).joined(separator: ", ")))")
        }
        if site.tracking.pseudonymous, (config.pseudonymSecret ?? site.tracking.pseudonymSecret ?? "").isEmpty {
            throw ConfigLayers.ConfigError(
                "the site enables pseudonymous tracking but no secret is set: add tracking.pseudonym_secret to the site file or set WAYMARK_EDGE_PSEUDONYM_SECRET")
        }
        self.config = config
        self.siteID = site.id
        self.boot = boot ?? Self.makeBootID()
        self.topics = Topics(prefix: config.topicPrefix ?? "waymark/v1/\(site.id)")
        self.source = source
        var log = logger
        log[metadataKey: LogKey.gateway] = .string(config.gateway)
        log[metadataKey: LogKey.boot] = .string(self.boot)
        self.logger = log
        self.metrics = registry.map(EdgeMetrics.init(registry:))
        self.pipeline = EdgePipeline(gateway: config.gateway, boot: self.boot, window: config.windowS, rules: site.tracking,
                                     pseudonymSecret: config.pseudonymSecret)
        self.lanes = try PublishLanes(
            layout: config.publishShards,
            spool: .init(directory: config.spoolDir, maxBytes: config.spoolMaxBytes, segmentBatches: config.spoolSegmentBatches,
                         fsync: config.spoolFsync),
            topics: topics, gateway: config.gateway)
        self.client = try MQTTClient(.init(
            clientID: config.clientID, cleanSession: true, maxInflight: config.mqtt.maxInflight,
            maxQueued: max(config.mqtt.maxInflight * 4, 100), reconnectDelay: config.mqtt.reconnectMinS,
            reconnectDelayMax: config.mqtt.reconnectMaxS, exponentialBackoff: true))
        if lanes.recovered > 0 || lanes.damagedRegions > 0 {
            log.notice("spool read back", metadata: [
                "batches": .stringConvertible(lanes.recovered), "damaged_regions": .stringConvertible(lanes.damagedRegions)])
        }
        if site.tracking.isEmpty {
            log.warning("the site file's tracking rules are empty: no device will be reported (add tracking: macs / ibeacon_uuids / …)")
        }
    }

    /// A random 64-bit id, new at every start.
    static func makeBootID() -> String {
        var g = SystemRandomNumberGenerator()
        return Hex.encode((0..<8).map { _ in UInt8.random(in: 0...255, using: &g) })
    }

    /// Asks ``run()`` to shut down (as SIGTERM does).
    public func requestStop() { lock.withLock { stopRequested = true } }

    // MARK: SightingSink (source thread)

    public func deliver(hciEvent: UnsafeRawBufferPointer, time: Double) {
        lock.lock()
        let batch = pipeline.ingest(event: hciEvent, time: time)
        if let batch { spoolAndSendLocked(batch) }
        lock.unlock()
    }

    public func deliver(record: SightingRecord) {
        lock.lock()
        let batch = pipeline.ingest(record: record)
        if let batch { spoolAndSendLocked(batch) }
        lock.unlock()
    }

    public func deliverMalformed(line: Int, reason: String) {
        lock.lock()
        pipeline.malformedLine()
        let first = loggedCauses.insert("line:" + reason).inserted
        lock.unlock()
        if first { logger.warning("skipping malformed replay line (logged once per cause)", metadata: ["line": "\(line)", LogKey.reason: "\(reason)"]) }
    }

    public func sourceStateChanged(_ state: SourceState) {
        lock.withLock {
            scanState = state
            statusDirty = true
        }
        logger.info("source state", metadata: ["scan": "\(state.rawValue)", "source": "\(source.name)"])
    }
}
