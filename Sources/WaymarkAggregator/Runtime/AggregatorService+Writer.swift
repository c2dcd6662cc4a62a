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
            var attempts = 0
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
                    let started = ContinuousClock.now
                    try store.write(db!, batch)
                    metrics.commitSeconds.record(ContinuousClock.now - started)
                    metrics.commitRows.record(Double(batch.rowCount))
                    metrics.commits.increment()
                    metrics.writeQueueRows.set(Double(writes.currentWeight))
                    if failing {
                        logger.notice("PostgreSQL is back; writing the queued batches")
                        failing = false
                        metrics.dbUp.set(Double(1))
                    }
                    committed(batch)
                    break
                } catch let error as PostgresError where error.isConnectionFailure {
                    db?.close()
                    db = nil
                    metrics.dbErrors.increment()
                    metrics.dbUp.set(Double(0))
                    if !failing {
                        logger.error("PostgreSQL unavailable; fusion and publishing go on, writes queue (up to database.max_pending_rows) and acks pause: \(error)")
                        failing = true
                    }
                    Thread.sleep(forTimeInterval: config.retryS)
                } catch {
                    // Not a connection problem: the data or the schema is wrong. Retrying a few
                    // times covers transient conflicts; then stop loudly rather than drop data.
                    metrics.dbErrors.increment()
                    attempts += 1
                    logger.error("write failed (attempt \(attempts) of 3): \(error)")
                    if attempts >= 3 {
                        logger.critical("giving up: the batch cannot be stored; stopping without acking it (the gateways keep it)")
                        writes.close()
                        stop()
                        return
                    }
                    db?.close()
                    db = nil
                    Thread.sleep(forTimeInterval: config.retryS)
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

    /// The daily raw-sighting partition upkeep of a running aggregator (`PartitionUpkeep`).
    private func maintainPartitionsIfDue(_ db: inout PostgresConnection?, _ upkeep: inout PartitionUpkeep, url: String) {
        guard config.rawSightings, !isStopping else { return }
        let now = Self.now()
        guard upkeep.isDue(at: now) else { return }
        do {
            if db == nil || db?.isConnected == false { db = try PostgresConnection(url: url) }
            let (made, dropped) = try store.maintainPartitions(db!, now: Date(timeIntervalSince1970: now), retentionDays: config.rawRetentionDays)
            upkeep.succeeded(at: now)
            logger.info("raw sightings partitions", metadata: ["created": .stringConvertible(made), "dropped": .stringConvertible(dropped)])
        } catch {
            if let e = error as? PostgresError, e.isConnectionFailure {
                db?.close()
                db = nil
            }
            upkeep.failed(at: now)
            logger.warning("raw sightings partition upkeep failed; retrying in \(Int(upkeep.retryS)) s: \(error)")
        }
    }

    private var writesClosedAndEmpty: Bool { isStopping && writes.isClosed && writes.count == 0 }

    /// After a commit: publish the acks, tell the fusion thread, count.
    private func committed(_ batch: WriteBatch) {
        lock.lock()
        committedInbox.append(batch.progress)
        committedSightingsStorage += batch.sightingCount
        lock.unlock()
        guard let client else { return }
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
