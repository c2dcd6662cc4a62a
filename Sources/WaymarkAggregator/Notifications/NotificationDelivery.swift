import Foundation
import Logging
import WaymarkCore
import WaymarkMQTT
import WaymarkNotify
import WaymarkPostgres
import WaymarkService

/// Delivers committed notifications (docs/notifications.md, "Delivery"): publishes each on
/// `…/notifications` and `…/devices/<device>/notifications` (QoS 1), hands those of rules with a
/// webhook to the `WebhookDispatcher`, and records what happened on the `notifications` rows (the
/// outbox) and in `webhook_attempts`, on its own thread with its own PostgreSQL connection.
///
/// Nothing is delivered before the transaction that stores it has committed (the writer calls
/// `submit` after the commit), and a row is marked published only when the broker has confirmed
/// both messages (PUBACK), or delivered when the webhook answered 2xx. What a crash interrupts is
/// delivered again at the next start (`restore`): at least once, with the notification id for the
/// receiver to de-duplicate on.
///
/// `@unchecked Sendable`: `inbox`, `acked`, `attempts`, `dropped` and `stopping` are shared with
/// the writer thread, the MQTT network thread and the dispatcher's tasks, always under `lock`;
/// `webhooks`, `dispatcher` and `client` are set by the service's thread before the delivery
/// thread starts (`Thread.start` orders them) and only read afterwards; the rest belongs to the
/// delivery thread.
final class NotificationDelivery: @unchecked Sendable {
    /// One stored notification to deliver.
    struct Item: Sendable {
        var id: String
        var rule: String
        var device: DeviceID
        var payload: [UInt8]
        var needsMQTT: Bool
        var needsWebhook: Bool
        /// Webhook attempts already made (by a previous run).
        var webhookAttempts: Int
        var storedAt: Double
    }

    /// Items waiting between the writer and this thread (beyond it: dropped, delivered at the next start).
    static let maxInbox = 100_000
    /// Records waiting for the database (beyond it the oldest are dropped, logged).
    static let maxRecords = 200_000

    let siteID: String
    let topics: Topics
    let logger: Logger
    let metrics: AggregatorMetrics
    /// Created by `start` (an HTTP client must be shut down once made, so it is made only when
    /// delivery runs), from what `attachWebhooks` set.
    private(set) var dispatcher: WebhookDispatcher?
    private var webhooks: (settings: WebhookSettings, targets: [String: WebhookDispatcher.Target])?
    private let lock = NSLock()
    private var inbox: [Item] = []
    private var acked: [Int32] = []
    private var attempts: [WebhookDispatcher.Attempt] = []
    private var dropped: [String] = []
    private var stopping = false
    private var done = DispatchSemaphore(value: 0)
    private var thread: Thread?

    // Delivery thread only.
    var client: MQTTClient?
    var awaitingPublish: [Item] = []
    var tracker = PublishTracker()
    var records = DeliveryRecords()

    init(siteID: String, topics: Topics, logger: Logger, metrics: AggregatorMetrics) {
        self.siteID = siteID
        self.topics = topics
        self.logger = logger
        self.metrics = metrics
    }

    /// The webhooks to deliver to (rule id → URL and secret); call before `start`.
    func attachWebhooks(settings: WebhookSettings, targets: [String: WebhookDispatcher.Target]) {
        webhooks = targets.isEmpty ? nil : (settings, targets)
    }

    // MARK: Other threads

    /// Committed notifications (writer thread, after the commit). Never blocks.
    func submit(_ notifications: [RuleNotification], storedAt: Double) {
        guard !notifications.isEmpty else { return }
        let items = notifications.map {
            Item(id: $0.id, rule: $0.rule, device: $0.device, payload: $0.json, needsMQTT: true,
                 needsWebhook: $0.hasWebhook, webhookAttempts: 0, storedAt: storedAt)
        }
        enqueue(items)
    }

    /// What a previous run left undelivered (start-up, before the writer runs).
    func restore(_ undelivered: [AggregatorStore.Undelivered]) {
        enqueue(undelivered.map {
            Item(id: $0.id, rule: $0.rule, device: $0.device, payload: $0.payload, needsMQTT: $0.needsMQTT,
                 needsWebhook: $0.needsWebhook, webhookAttempts: $0.webhookAttempts, storedAt: $0.storedAt)
        })
    }

    private func enqueue(_ items: [Item]) {
        lock.lock()
        let room = max(0, Self.maxInbox - inbox.count)
        inbox += items.prefix(room)
        lock.unlock()
        if items.count > room {
            metrics.notificationInboxDropped.increment(by: Int64(items.count - room))
            logger.error("notification delivery is \(Self.maxInbox) behind; \(items.count - room) notifications wait in the table for the next start")
        }
    }

    /// A PUBACK from the broker (MQTT network thread): only the message id, matched later.
    func published(mid: Int32) {
        lock.lock()
        acked.append(mid)
        lock.unlock()
    }

    /// A webhook attempt (dispatcher task).
    func attempted(_ a: WebhookDispatcher.Attempt) {
        lock.lock()
        attempts.append(a)
        lock.unlock()
        metrics.webhookAttempts[a.outcome]?.increment()
    }

    /// A job pushed out of the full webhook queue (dispatcher or delivery thread).
    func droppedFromQueue(_ job: WebhookJob) {
        lock.lock()
        dropped.append(job.id)
        lock.unlock()
        metrics.webhookDropped.increment()
    }

    // MARK: Lifecycle

    /// Starts the delivery thread (and the webhook workers) publishing through `client`.
    func start(client: MQTTClient, databaseURL: String, retryS: Double) {
        self.client = client
        if let webhooks {
            let dispatcher = WebhookDispatcher(
                settings: webhooks.settings, targets: webhooks.targets, logger: logger,
                onAttempt: { [weak self] in self?.attempted($0) },
                onDropped: { [weak self] in self?.droppedFromQueue($0) })
            self.dispatcher = dispatcher
            dispatcher.start()
        }
        let t = Thread { [self] in loop(databaseURL: databaseURL, retryS: retryS) }
        t.name = "waymark-aggregator-notify"
        thread = t
        t.start()
    }

    /// Stops after a last round: what the broker confirmed and the attempts made are recorded
    /// (for up to a few seconds); what is still undelivered stays so in the table for the next start.
    /// Call from a plain thread (it waits for the webhook tasks to stop and shuts the HTTP client
    /// down). Every `start` must be followed by a `stop`.
    func stop() {
        lock.lock()
        stopping = true
        lock.unlock()
        if let dispatcher {
            let stopped = DispatchSemaphore(value: 0)
            Task {
                await dispatcher.shutdown()
                stopped.signal()
            }
            _ = stopped.wait(timeout: .now() + 10)
        }
        if thread != nil { _ = done.wait(timeout: .now() + 10) }
    }

    var isStopping: Bool {
        lock.lock(); defer { lock.unlock() }
        return stopping
    }

    /// Takes what the other threads handed over.
    func takeShared() -> (items: [Item], acked: [Int32], attempts: [WebhookDispatcher.Attempt], dropped: [String], stopping: Bool) {
        lock.lock(); defer { lock.unlock() }
        let out = (inbox, acked, attempts, dropped, stopping)
        inbox.removeAll(keepingCapacity: true)
        acked.removeAll(keepingCapacity: true)
        attempts.removeAll(keepingCapacity: true)
        dropped.removeAll(keepingCapacity: true)
        return out
    }

    func signalDone() { done.signal() }
}
