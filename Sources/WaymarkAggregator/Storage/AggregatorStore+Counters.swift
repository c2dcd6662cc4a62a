import Foundation
import WaymarkCore
import WaymarkPostgres

extension AggregatorStore {
    /// Gateway status history, per-hour ingest counts and rejections.
    func writeCounters(_ db: PostgresConnection, _ b: WriteBatch) throws {
        try writeStatuses(db, b.statuses)
        try writeIngest(db, b)
        try writeRejections(db, b.rejections)
    }

    func writeStatuses(_ db: PostgresConnection, _ s: [WriteBatch.Status]) throws {
        if !s.isEmpty {
            try db.query("""
                INSERT INTO gateway_status (site_id, gateway_id, received_at, state, boot, version, spool_depth,
                                            spool_dropped, scan, reported_at)
                SELECT $1, g, to_timestamp(r), st, bt, v, sd, dr, sc, to_timestamp(t)
                FROM unnest($2::text[], $3::float8[], $4::text[], $5::text[], $6::text[], $7::int[], $8::bigint[],
                            $9::text[], $10::float8[]) AS u(g, r, st, bt, v, sd, dr, sc, t)
                ON CONFLICT DO NOTHING
                """, [siteID, s.map(\.gateway), s.map(\.receivedAt), s.map(\.status.state.rawValue), s.map(\.status.boot),
                      s.map(\.status.version), s.map(\.status.spoolDepth), s.map(\.status.spoolDropped), s.map(\.status.scan),
                      s.map { $0.status.t.flatMap { $0.isFinite ? $0 : nil } }])
        }
    }

    func writeIngest(_ db: PostgresConnection, _ b: WriteBatch) throws {
        if !b.ingest.isEmpty {
            let i = Array(b.ingest)
            try db.query("""
                INSERT INTO gateway_ingest_hourly (site_id, gateway_id, hour, batches, sightings, clock_corrected,
                                                   last_batch_at, max_clock_offset_s)
                SELECT $1, g, to_timestamp(h), n, s, c, to_timestamp(l), o
                FROM unnest($2::text[], $3::float8[], $4::bigint[], $5::bigint[], $6::bigint[], $7::float8[], $8::float8[])
                     AS u(g, h, n, s, c, l, o)
                ON CONFLICT (site_id, gateway_id, hour) DO UPDATE SET
                  batches = gateway_ingest_hourly.batches + excluded.batches,
                  sightings = gateway_ingest_hourly.sightings + excluded.sightings,
                  clock_corrected = gateway_ingest_hourly.clock_corrected + excluded.clock_corrected,
                  last_batch_at = greatest(gateway_ingest_hourly.last_batch_at, excluded.last_batch_at),
                  max_clock_offset_s = greatest(gateway_ingest_hourly.max_clock_offset_s, excluded.max_clock_offset_s)
                """, [siteID, i.map(\.key.gateway), i.map(\.key.hour), i.map(\.value.batches), i.map(\.value.sightings),
                      i.map(\.value.clockCorrected), i.map(\.value.lastBatchAt), i.map(\.value.maxOffsetS)])
        }
    }

    func writeRejections(_ db: PostgresConnection, _ rejections: [WriteBatch.RejectionKey: Int]) throws {
        if !rejections.isEmpty {
            let r = Array(rejections)
            try db.query("""
                INSERT INTO gateway_rejections (site_id, gateway_id, hour, reason, count)
                SELECT $1, g, to_timestamp(h), r, n FROM unnest($2::text[], $3::float8[], $4::text[], $5::bigint[]) AS u(g, h, r, n)
                ON CONFLICT (site_id, gateway_id, hour, reason) DO UPDATE SET count = gateway_rejections.count + excluded.count
                """, [siteID, r.map(\.key.gateway), r.map(\.key.hour), r.map(\.key.reason.rawValue), r.map(\.value)])
        }
    }

    /// Raw sightings by COPY (text format).
    func writeRaw(_ db: PostgresConnection, _ rows: [WriteBatch.RawSighting]) throws {
        try db.copy(into: "sightings", columns: ["site_id", "gateway_id", "boot", "shard", "seq", "device_id", "first_at", "last_at",
                                                 "count", "rssi_max", "rssi_mean", "rssi_last", "tx"]) { w in
            for r in rows {
                w.field(siteID, first: true)
                w.field(r.gateway)
                w.field(r.boot)
                w.field(String(r.shard))
                w.field(String(r.seq))
                w.field(r.entry.device.rawValue)
                w.field(Self.timestamp(r.entry.first))
                w.field(Self.timestamp(r.entry.last))
                w.field(String(r.entry.count))
                w.field(String(r.entry.rssiMax))
                w.field(String(r.entry.rssiMean))
                w.field(String(r.entry.rssiLast))
                w.field(r.entry.tx.map { String($0) })
                try w.endRow()
            }
        }
    }

    /// A Unix time as a timestamptz literal PostgreSQL parses without a session time zone question.
    static func timestamp(_ t: Double) -> String {
        let seconds = t.rounded(.down)
        let micros = Int(((t - seconds) * 1_000_000).rounded())
        var tm = tm()
        var time = time_t(seconds)
        gmtime_r(&time, &tm)
        return String(format: "%04d-%02d-%02d %02d:%02d:%02d.%06d+00", Int(tm.tm_year) + 1900, Int(tm.tm_mon) + 1, Int(tm.tm_mday),
                      Int(tm.tm_hour), Int(tm.tm_min), Int(tm.tm_sec), min(micros, 999_999))
    }
}
