import Foundation
import Logging
import WaymarkConfig
import WaymarkCore
import WaymarkMQTT
import WaymarkPostgres
import WaymarkService
import WaymarkHTTP

/// The running aggregator: MQTT in, fusion, MQTT out, PostgreSQL.
///
/// Threads (all blocking work stays off Swift's cooperative pool):
/// - libmosquitto's network thread receives messages and only appends them to `ingest`;
/// - `ingest.decode_threads` threads decode the sighting batches waiting there (`DecodeStage`);
/// - the fusion thread (the caller of `run()`) takes the messages in arrival order, validates,
///   fuses (a batch's parts by `fusion.workers` engines in parallel, on Dispatch's threads, the
///   fusion thread waiting for them: `FusionWorkers`), publishes device state and events, and
///   every `database.flush_interval_ms` seals a `WriteBatch`;
/// - the writer thread owns the `PostgresConnection`, commits batches in order, retries while the
///   database is down, and publishes each gateway's ack only after its commit.
/// The queues between them are bounded, so a slow or absent database slows intake down instead of
/// growing memory; the broker (persistent session) and the gateways' spools keep the rest.
///
/// `@unchecked Sendable`: the mutable state shared between threads is the queues (locked), the
/// `committedInbox` (under `lock`) and `stopping` (under `lock`); everything else is confined to
/// one thread as described above.
public final class AggregatorService: @unchecked Sendable {
    public let config: AggregatorConfig
    public let site: Site
    let topics: Topics
    let logger: Logger
    let metrics: AggregatorMetrics
    let store: AggregatorStore
    var core: AggregatorCore
    let ingest: DecodeStage
    let writes: BlockingQueue<WriteBatch>
    let lock = NSLock()
    var stopping = false
    /// Set by the MQTT thread on every connect: the fusion thread then re-publishes the committed
    /// marks (`AggregatorCore.currentAcks`), which a restart or a broker outage may have kept from
    /// the gateways.
    var connectedSinceAcks = false
    /// A random id of this run, in the retained status: sharded aggregators read each other's to
    /// catch two owners of one shard (`ShardOwnership.conflicts`).
    let instanceID: String = (0..<8).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    /// Other runs already reported as owning shards of this one's (reported once each; under `lock`).
    var reportedConflicts: Set<String> = []
    /// Why the service stopped by itself (nil: stopped by `stop()`, i.e. SIGTERM/SIGINT).
    var failure: AggregatorFailure?
    var committedInbox: [[ProgressTracker.Key: UInt64]] = []
    var client: MQTTClient?
    /// Delivers committed notifications (MQTT, webhooks); nil when the site has no rules.
    let delivery: NotificationDelivery?
    var metricsEndpoint: MetricsEndpoint?
    var writerDone = DispatchSemaphore(value: 0)
    /// When the start-up partition upkeep ran (written before the writer thread starts, then read by it).
    var startupPartitionUpkeepAt: Double?
    /// Sightings committed so far (for tests and the benchmark).
    public var committedSightings: Int {
        lock.lock(); defer { lock.unlock() }
        return committedSightingsStorage
    }
    var committedSightingsStorage = 0
    /// Sightings taken by the fusion engine so far (for the benchmark).
    public var fusedSightings: Int {
        lock.lock(); defer { lock.unlock() }
        return fusedSightingsStorage
    }
    var fusedSightingsStorage = 0

    public init(config: AggregatorConfig, site: Site, logger: Logger = Logger(label: "waymark.aggregator")) {
        self.config = config
        self.site = site
        self.logger = logger
        topics = config.topicPrefix.map(Topics.init(prefix:)) ?? Topics(site: site.id)
        metrics = AggregatorMetrics(gateways: site.gateways.map(\.id), shards: config.shards.owned)
        for gauge in metrics.shardOwned { gauge.set(Int64(1)) }
        store = AggregatorStore(siteID: site.id, checkpointKey: config.shards.checkpointKey)
        var settings = AggregatorCore.Settings()
        settings.maxPayloadBytes = config.maxPayloadBytes
        settings.clock = config.clock
        settings.rawSightings = config.rawSightings
        settings.gapTimeoutS = config.gapTimeoutS
        settings.reorderWindowS = config.reorderWindowS
        settings.catchUpS = config.catchUpS
        settings.fusionWorkers = config.fusionWorkers
        settings.shards = config.shards
        core = AggregatorCore(site: site, topics: topics, settings: settings)
        ingest = DecodeStage(capacity: config.ingestQueueMessages, workers: config.decodeThreads,
                             preparer: BatchPreparer(for: core))
        writes = BlockingQueue(capacity: config.maxPendingRows)
        delivery = site.notifications.isEmpty ? nil
            : NotificationDelivery(siteID: site.id, topics: topics, logger: logger, metrics: metrics)
    }

    /// True once connected to the broker (subscriptions are made on every connect).
    public var isConnectedToBroker: Bool {
        lock.lock(); defer { lock.unlock() }
        return client?.isConnected ?? false
    }

    /// The port the metrics endpoint listens on (after `run()` started it), or nil.
    public var metricsPort: Int? { metricsEndpoint?.port }

    /// Asks `run()` to stop: the fusion thread leaves the broker first (what it has not delivered
    /// stays queued in the persistent session), fuses what it received, commits it, then `run()`
    /// returns. The last write's acks go out when the aggregator next connects.
    public func stop() {
        lock.lock()
        stopping = true
        lock.unlock()
    }

    /// Stops the service because of `failure`: `run()` throws it once the rest is shut down.
    func fail(_ failure: AggregatorFailure) {
        lock.lock()
        if self.failure == nil { self.failure = failure }
        lock.unlock()
        stop()
    }

    var isStopping: Bool {
        lock.lock(); defer { lock.unlock() }
        return stopping
    }

    static func now() -> Double { Date().timeIntervalSince1970 }
}

/// Why the aggregator stopped by itself (`run()` throws it; the process exits with status 1).
public struct AggregatorFailure: Error, CustomStringConvertible, Sendable {
    public var description: String
}

extension AggregatorService {
    /// The metrics in Prometheus text format (what `/metrics` serves).
    public func metricsText() -> [UInt8] {
        var bytes: [UInt8] = []
        metrics.registry.emit(into: &bytes)
        return bytes
    }
}
