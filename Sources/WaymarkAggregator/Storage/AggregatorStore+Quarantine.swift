import Foundation
import WaymarkCore
import WaymarkPostgres

/// A message (or a table's derived rows) PostgreSQL refused for its data, set aside in the
/// `quarantine` table (schema 0008) so that the rest of the write commits.
public struct Quarantined: Sendable, Equatable {
    /// The gateway the message came from; nil for derived rows.
    public var gateway: String?
    /// `sightings` (a batch's raw sightings), `status`, or `rows:<table>` for derived rows.
    public var kind: String
    /// When the aggregator received the message (derived rows: when they were set aside).
    public var receivedAt: Double
    /// The message as received; nil for derived rows.
    public var payload: [UInt8]?
    public var sqlState: String
    public var error: String
}

extension AggregatorStore {
    /// The body of a careful write (see `write(_:_:careful:)`): everything but the checkpoints and
    /// the marks, each message or table under its own savepoint.
    func writeIsolated(_ db: PostgresConnection, _ batch: WriteBatch) throws -> [Quarantined] {
        var out: [Quarantined] = []
        let now = Date().timeIntervalSince1970
        for part in Self.derivedParts {
            if let e = try Self.isolated(db, { try part.write(self, db, batch) }) {
                out.append(.init(gateway: nil, kind: "rows:\(part.table)", receivedAt: now, payload: nil, sqlState: e.sqlState ?? "", error: e.description))
            }
        }
        if let e = try Self.isolated(db, { try writeIngest(db, batch) }) {
            out.append(.init(gateway: nil, kind: "rows:gateway_ingest_hourly", receivedAt: now, payload: nil, sqlState: e.sqlState ?? "", error: e.description))
        }
        for s in batch.statuses {
            if let e = try Self.isolated(db, { try writeStatuses(db, [s]) }) {
                out.append(.init(gateway: s.gateway, kind: "status", receivedAt: s.receivedAt, payload: s.payload, sqlState: e.sqlState ?? "", error: e.description))
            }
        }
        if !batch.rawSightings.isEmpty {
            struct Key: Hashable { var gateway: String; var boot: String; var shard: Int; var seq: UInt64 }
            var order: [Key] = []
            var rows: [Key: [WriteBatch.RawSighting]] = [:]
            for r in batch.rawSightings {
                let k = Key(gateway: r.gateway, boot: r.boot, shard: r.shard, seq: r.seq)
                if rows[k] == nil { order.append(k) }
                rows[k, default: []].append(r)
            }
            var sources: [Key: WriteBatch.RawSource] = [:]
            for s in batch.rawSources { sources[Key(gateway: s.gateway, boot: s.boot, shard: s.shard, seq: s.seq)] = s }
            for k in order {
                if let e = try Self.isolated(db, { try writeRaw(db, rows[k]!) }) {
                    let source = sources[k]
                    out.append(.init(gateway: k.gateway, kind: "sightings", receivedAt: source?.receivedAt ?? now, payload: source?.payload ?? [],
                                     sqlState: e.sqlState ?? "", error: e.description))
                }
            }
        }
        var rejections = batch.rejections
        for q in out { if let g = q.gateway { rejections[.init(gateway: g, hour: (q.receivedAt / 3600).rounded(.down) * 3600, reason: .quarantined), default: 0] += 1 } }
        try writeRejections(db, rejections)
        for q in out {
            try db.query("""
                INSERT INTO quarantine (site_id, received_at, gateway_id, kind, payload, sqlstate, error)
                VALUES ($1, to_timestamp($2), $3, $4, $5::bytea, $6, $7)
                """, [siteID, q.receivedAt, q.gateway, q.kind, q.payload.map(PostgresBytes.init), q.sqlState, q.error])
        }
        return out
    }

    /// Runs `body` under a savepoint: a data error (`PostgresError.isDataError`) rolls back only
    /// what `body` did and is returned; any other error is thrown (the transaction fails).
    static func isolated(_ db: PostgresConnection, _ body: () throws -> Void) throws -> PostgresError? {
        try db.execute("SAVEPOINT waymark_item")
        do {
            try body()
            try db.execute("RELEASE SAVEPOINT waymark_item")
            return nil
        } catch let error as PostgresError where error.isDataError {
            try db.execute("ROLLBACK TO SAVEPOINT waymark_item")
            try db.execute("RELEASE SAVEPOINT waymark_item")
            return error
        }
    }
}
