import Foundation
import Logging
import WaymarkPostgres

extension AggregatorService {
    /// The rollup refresher's loop (its own thread and connection, `reports.refresh_interval_s`):
    /// every interval, `waymark_report_refresh(site)` rebuilds the report hours the writer's rows
    /// made dirty. It never holds up ingest: the writer only marks hours dirty, and the refresh
    /// takes its own advisory lock (a `waymark report` refreshing at the same moment waits for it).
    /// A failure is logged and counted, and tried again at the next interval with a new connection.
    /// Returns when the service stops (a refresh under way is finished first), then signals `done`.
    func rollupLoop(url: String, done: DispatchSemaphore) {
        defer { done.signal() }
        let interval = config.reportRefreshIntervalS
        guard interval > 0 else { return }
        var connection: PostgresConnection?
        var failing = false
        defer { connection?.close() }
        var next = Date().addingTimeInterval(interval)
        while !isStopping {
            if Date() < next {
                Thread.sleep(forTimeInterval: min(0.25, max(0, next.timeIntervalSinceNow)))
                continue
            }
            next = Date().addingTimeInterval(interval)
            let started = ContinuousClock.now
            do {
                if connection == nil { connection = try PostgresConnection(url: url) }
                let hours = try connection!.query("SELECT waymark_report_refresh($1::text)", [site.id]).first?.int(0) ?? 0
                let elapsed = (ContinuousClock.now - started).components
                let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
                metrics.rollupRefreshes.increment()
                metrics.rollupHoursRebuilt.increment(by: Int64(hours))
                metrics.rollupRefreshSeconds.set(seconds)
                if failing { logger.info("report rollups refreshed again") }
                failing = false
                logger.debug("report rollups refreshed", metadata: ["hours": .stringConvertible(hours),
                                                                    "seconds": .string(String(format: "%.2f", seconds))])
            } catch {
                metrics.rollupRefreshFailures.increment()
                if !failing {
                    logger.warning("report rollup refresh failed; trying again every \(Int(interval)) s (reports read on the primary still refresh themselves): \(error)")
                }
                failing = true
                connection?.close()
                connection = nil
            }
        }
    }
}
