import Foundation
import WaymarkPostgres

extension AggregatorStore {
    /// What one upkeep of the history partitions did (`maintainHistory`). Counts only: nothing
    /// that identifies a device.
    public struct HistoryUpkeep: Sendable, Equatable {
        /// Monthly partitions created (of region_events, visits and transitions together).
        public var created = 0
        /// Monthly partitions dropped by retention.
        public var droppedPartitions = 0
        /// Journeys deleted by retention (ended before the kept months).
        public var droppedJourneys = 0
        /// Rows of dropped months deleted from the default partitions (late evidence).
        public var lateRows = 0
        /// First day kept (`yyyy-MM-01`) when retention ran, nil when it is off.
        public var keptFrom: String?
    }

    /// How far ahead of today the monthly history partitions exist: the next month's is there more
    /// than a month before it starts, so a stopped aggregator or a failed upkeep has weeks to recover.
    static let historyAheadDays = 40.0

    /// Creates the monthly partitions of region_events, visits and transitions (schema 0011) from
    /// yesterday's month to the month `historyAheadDays` ahead, moving rows of those months out of
    /// the default partitions, and, when `retentionDays` > 0, drops every month wholly before
    /// `now - retentionDays` with the journeys that ended before it
    /// (`waymark_drop_history_partitions`). Partitions are shared by every site of the database.
    public func maintainHistory(_ db: PostgresConnection, now: Date, retentionDays: Int) throws -> HistoryUpkeep {
        let today = Self.utcDayStart(now)
        return try db.transaction { db in
            // Creating or dropping a partition locks its table against readers for a moment; a
            // long report refresh holding the table makes this one fail and retry later rather
            // than hold the writes up behind it.
            try db.execute("SET LOCAL lock_timeout = '10s'")
            var done = HistoryUpkeep()
            done.created = try db.query("SELECT waymark_prepare_history_partitions($1::date, $2::date)",
                                        [Self.utcDate(today - Self.day), Self.utcDate(today + Self.historyAheadDays * Self.day)]).first?.int(0) ?? 0
            guard retentionDays > 0 else { return done }
            let keep = Self.utcDate(today - Double(retentionDays) * Self.day)
            if let row = try db.query("SELECT partitions, journeys, late_rows FROM waymark_drop_history_partitions($1::date)", [keep]).first {
                done.droppedPartitions = try row.int(0)
                done.droppedJourneys = try row.int(1)
                done.lateRows = try row.int(2)
            }
            done.keptFrom = String(keep.prefix(8)) + "01"
            return done
        }
    }
}
