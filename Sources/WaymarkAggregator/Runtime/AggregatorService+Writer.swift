import Foundation
import Logging
import WaymarkCore
import WaymarkMQTT
import WaymarkPostgres
import WaymarkService

extension AggregatorService {
    /// How long a stopping aggregator keeps retrying an unreachable database before it gives up
    /// (what is not committed is not acked, so the gateways resend it to the next run).
    static let shutdownGraceS = 15.0
    /// Longest wait between retries while PostgreSQL is unavailable (the wait doubles from `database.retry_s`).
    static let maxRetryS = 30.0
    /// Queued writes are merged into one transaction up to about this many rows.
    static let maxMergedRows = 500_000

    /// The writer thread: commits each sealed batch in order, then acks it.
    func writerLoop(url: String) {
        ThreadName.set("wm-writer")
        var db: PostgresConnection?
        var failing = false
        var stopDeadline: Double?
        var upkeep = PartitionUpkeep(retryS: max(config.retryS, 60))
        if let at = startupPartitionUpkeepAt { upkeep.succeeded(at: at) }
        defer { writerDone.signal() }
        while var batch = nextWrite(idle: { maintainPartitionsIfDue(&db, &upkeep, url: url) }) {
            maintainPartitionsIfDue(&db, &upkeep, url: url)
            // Commit everything already queued together (see WriteBatch.absorb).
            while batch.rowCount < Self.maxMergedRows, let more = writes.pop(timeout: 0) { batch.absorb(more) }
            // After PostgreSQL refused the group for its data, it is written again message by
            // message (`AggregatorStore.write(careful:)`) and what is refused again is quarantined.
            var careful = false
            var backoff = config.retryS
            // Set when a write attempt failed in a way that may have happened after the server
            // committed (the connection dropped, COMMIT's reply lost): before writing again, read
            // back the number of the last committed write.
            var outcomeUnknown = false
            while true {
                if isStopping {
                    stopDeadline = stopDeadline ?? Self.now() + Self.shutdownGraceS
                    if Self.now() > stopDeadline! {
                        logger.error("PostgreSQL still unavailable at shutdown; \(writes.count + 1) uncommitted writes dropped — not acked, the gateways will resend them")
                        writes.close()
                        return
                    }
                }
                do {
                    if db == nil || db?.isConnected == false { db = try PostgresConnection(url: url) }
                    if outcomeUnknown {
                        let stored = try store.committedWrite(db!)
                        outcomeUnknown = false
                        if stored >= batch.aggregatorState.writeNumber {
                            logger.notice("the write whose commit reply was lost had committed; acking it without writing it again",
                                          metadata: ["write": .stringConvertible(batch.aggregatorState.writeNumber)])
                            metrics.ambiguousCommits.increment()
                            if failing {
                                logger.notice("PostgreSQL is back; writing the queued batches")
                                failing = false
                                metrics.dbUp.set(Double(1))
                            }
                            committed(batch)
                            break
                        }
                    }
                    let started = ContinuousClock.now
                    let quarantined = try store.write(db!, batch, careful: careful)
                    metrics.commitSeconds.record(ContinuousClock.now - started)
                    metrics.commitRows.record(Double(batch.rowCount))
                    metrics.commits.increment()
                    metrics.writeQueueRows.set(Double(writes.currentWeight))
                    if failing {
                        logger.notice("PostgreSQL is back; writing the queued batches")
                        failing = false
                        metrics.dbUp.set(Double(1))
                    }
                    noteQuarantined(quarantined)
                    committed(batch, notificationsStored: !quarantined.contains { $0.kind == "rows:notifications" })
                    break
                } catch let error as PostgresError where error.isTransient {
                    db?.close()
                    db = nil
                    outcomeUnknown = true
                    metrics.dbErrors.increment()
                    metrics.dbUp.set(Double(0))
                    if !failing {
                        logger.error("PostgreSQL unavailable; fusion and publishing go on, writes queue (up to database.max_pending_rows) and acks pause; retrying until it is back: \(error)")
                        failing = true
                    }
                    // While stopping, keep to the short interval: the shutdown grace is 15 s.
                    Thread.sleep(forTimeInterval: isStopping ? config.retryS : backoff)
                    backoff = min(backoff * 2, max(config.retryS, Self.maxRetryS))
                } catch let error as PostgresError where error.isDataError && !careful {
                    metrics.dbErrors.increment()
                    logger.warning("PostgreSQL refused a write for its data (SQLSTATE \(error.sqlState ?? "?")); writing it again message by message to set the refused ones aside in the quarantine table")
                    logger.debug("refused write: \(error)")
                    careful = true
                } catch {
                    // Neither the connection nor one message's data: the schema or the rights are
                    // wrong, and retrying cannot fix that. Stop with a failure status (the
                    // supervisor restarts the aggregator, which checks the schema at start).
                    metrics.dbErrors.increment()
                    logger.critical("the write cannot be stored and retrying cannot fix it; stopping without acking it (the gateways keep it): \(error)")
                    fail(AggregatorFailure(description: "a write failed for a reason retrying cannot fix: \(error)"))
                    writes.close()
                    return
                }
            }
        }
        db?.close()
    }

    /// The next write; `idle` runs whenever none came for 0.2 s.
    private func nextWrite(idle: () -> Void) -> WriteBatch? {
        while true {
            if let b = writes.pop(timeout: 0.2) { return b }
            if writesClosedAndEmpty { return nil }
            idle()
        }
    }

    /// The daily partition upkeep of a running aggregator (`PartitionUpkeep`).
    private func maintainPartitionsIfDue(_ db: inout PostgresConnection?, _ upkeep: inout PartitionUpkeep, url: String) {
        guard !isStopping else { return }
        let now = Self.now()
        guard upkeep.isDue(at: now) else { return }
        do {
            if db == nil || db?.isConnected == false { db = try PostgresConnection(url: url) }
            try maintainPartitions(db!, now: now)
            upkeep.succeeded(at: now)
        } catch {
            if let e = error as? PostgresError, e.isConnectionFailure {
                db?.close()
                db = nil
            }
            upkeep.failed(at: now)
            metrics.partitionUpkeepFailures.increment()
            logger.warning("partition upkeep failed; retrying in \(Int(upkeep.retryS)) s: \(error)")
        }
    }

    /// One partition upkeep: the raw-sighting days when raw sightings are stored, and always the
    /// history months (schema 0011) with their retention (`history.retention_days`). Logs counts
    /// only, never a device.
    func maintainPartitions(_ db: PostgresConnection, now: Double) throws {
        let date = Date(timeIntervalSince1970: now)
        if config.rawSightings {
            let (made, dropped) = try store.maintainPartitions(db, now: date, retentionDays: config.rawRetentionDays)
            logger.info("raw sightings partitions", metadata: ["created": .stringConvertible(made), "dropped": .stringConvertible(dropped)])
        }
        let history = try store.maintainHistory(db, now: date, retentionDays: config.historyRetentionDays)
        metrics.historyPartitionsCreated.increment(by: Int64(history.created))
        if let kept = history.keptFrom {
            metrics.historyPartitionsDropped.increment(by: Int64(history.droppedPartitions))
            metrics.historyJourneysDropped.increment(by: Int64(history.droppedJourneys))
            logger.info("history partitions; retention dropped the months before \(kept)",
                        metadata: ["created": .stringConvertible(history.created),
                                   "dropped": .stringConvertible(history.droppedPartitions),
                                   "journeys_dropped": .stringConvertible(history.droppedJourneys),
                                   "late_rows_dropped": .stringConvertible(history.lateRows)])
        } else {
            logger.info("history partitions", metadata: ["created": .stringConvertible(history.created)])
        }
    }

    /// Counts and logs what a careful write set aside (the error text may hold device ids: debug only).
    private func noteQuarantined(_ quarantined: [Quarantined]) {
        for q in quarantined {
            if q.gateway != nil { metrics.rejected[.quarantined]?.increment() }
            logger.warning("PostgreSQL refused a message for its data; it is in the quarantine table and was acked",
                           metadata: [LogKey.gateway: .string(q.gateway ?? "-"), "kind": .string(q.kind), "sqlstate": .string(q.sqlState)])
            logger.debug("quarantined: \(q.error)")
        }
    }

    private var writesClosedAndEmpty: Bool { isStopping && writes.isClosed && writes.count == 0 }

    /// After a commit: hand the notifications to delivery, publish the acks, tell the fusion
    /// thread, count. Notifications PostgreSQL refused (quarantined) are not delivered.
    private func committed(_ batch: WriteBatch, notificationsStored: Bool = true) {
        lock.lock()
        committedInbox.append(batch.progress)
        committedSightingsStorage += batch.sightingCount
        lock.unlock()
        if notificationsStored && !batch.notifications.isEmpty {
            metrics.notificationsStored.increment(by: Int64(batch.notifications.count))
            delivery?.submit(batch.notifications, storedAt: Self.now())
        }
        guard let client else { return }
        // Stopping and off the broker: these acks go out at the next connect (`currentAcks`).
        if isStopping && !client.isConnected { return }
        for (key, seq) in batch.progress.sorted(by: { $0.key.gateway < $1.key.gateway }) {
            do {
                try client.publish(topic: topics.ack(key.gateway), payload: DevicePayloads.ack(GatewayAck(boot: key.boot, seq: seq)), qos: 1)
                metrics.acks.increment()
            } catch {
                metrics.publishFailures.increment()
                logger.warning("ack publish failed (the gateway will resend and be re-acked): \(error)")
            }
        }
    }
}
