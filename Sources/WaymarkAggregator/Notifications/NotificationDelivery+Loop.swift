import Foundation
import WaymarkPostgres
import WaymarkService

extension NotificationDelivery {
    /// The delivery thread: hand-overs in, MQTT out, webhooks queued, records written every
    /// round (about 20 a second while there is something to do).
    func loop(databaseURL: String, retryS: Double) {
        ThreadName.set("wm-notify")
        defer { signalDone() }
        var db: PostgresConnection?
        var nextWriteAt = 0.0, backoff = retryS
        var stopDeadline: Double?
        var failing = false
        while true {
            let shared = takeShared()
            for item in shared.items {
                if item.needsMQTT { awaitingPublish.append(item) }
                guard item.needsWebhook else { continue }
                if let dispatcher, dispatcher.hasTarget(item.rule) {
                    dispatcher.enqueue(WebhookJob(id: item.id, rule: item.rule, payload: item.payload, attempt: item.webhookAttempts + 1,
                                                  storedAt: item.storedAt, due: 0))
                } else {
                    // The rule, or its webhook, is gone from the site file.
                    records.statuses.append((item.id, "cancelled"))
                }
            }
            publishAwaiting()
            // After publishing: every message id published so far is registered.
            records.published += tracker.acknowledge(shared.acked)
            records.attempts += shared.attempts
            records.statuses += shared.dropped.map { ($0, "dropped") }
            let lost = records.trim(to: Self.maxRecords)
            if lost > 0 { logger.error("PostgreSQL has been unreachable for long: \(lost) delivery records dropped (those notifications may be delivered again at the next start)") }

            let now = Date().timeIntervalSince1970
            if !records.isEmpty && now >= nextWriteAt {
                do {
                    if db == nil || db?.isConnected == false { db = try PostgresConnection(url: databaseURL) }
                    try records.write(db!, site: siteID)
                    records.clear()
                    backoff = retryS
                    if failing { logger.notice("notification delivery records are written again"); failing = false }
                } catch let error as PostgresError where error.isTransient {
                    db?.close()
                    db = nil
                    if !failing { logger.warning("cannot record notification deliveries, PostgreSQL unavailable; retrying: \(error)"); failing = true }
                    nextWriteAt = now + backoff
                    backoff = min(backoff * 2, 30)
                } catch {
                    logger.error("cannot record notification deliveries; \(records.count) records dropped (those notifications may be delivered again at the next start): \(error)")
                    records.clear()
                }
            }
            metrics.webhookQueue.set(Double(dispatcher?.queue.count ?? 0))
            metrics.notificationsUnconfirmed.set(Double(tracker.pendingCount + awaitingPublish.count))

            if shared.stopping {
                // A last chance for the broker's acks of what was just published, then the records.
                let deadline = stopDeadline ?? now + 3
                stopDeadline = deadline
                let waitingForAcks = tracker.pendingCount > 0 && client?.isConnected == true
                if (!waitingForAcks && records.isEmpty) || now > deadline { break }
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        db?.close()
    }

    /// Publishes the notifications waiting for the broker (each on both topics), while connected.
    func publishAwaiting() {
        guard let client, client.isConnected, !awaitingPublish.isEmpty else { return }
        var still: [Item] = []
        for item in awaitingPublish {
            do {
                let all = try client.publish(topic: topics.notifications, payload: item.payload, qos: 1)
                let own = try client.publish(topic: topics.deviceNotifications(item.device), payload: item.payload, qos: 1)
                tracker.register(item.id, messageIDs: [all, own])
                metrics.notificationsPublished.increment()
            } catch {
                still.append(item)
                metrics.publishFailures.increment()
                logger.debug("notification publish failed; retried: \(error)")
            }
        }
        awaitingPublish = still
    }
}
