import Foundation
import WaymarkCore
import WaymarkFusion
import WaymarkNotify
import WaymarkPostgres

extension AggregatorStore {
    /// Stores `batch` in one transaction: derived rows (ON CONFLICT DO NOTHING), counters,
    /// checkpoints, and last the gateway high-water marks. Either all of it commits or none.
    /// Arrays are bound as parameters (`unnest($n::type[])`): one round trip per table however
    /// many rows; raw sightings, the bulk, go through COPY.
    ///
    /// `careful` is the retry after PostgreSQL refused the write for its data
    /// (`PostgresError.isDataError`): each gateway status, each batch's raw sightings and each
    /// table of derived rows is written under its own savepoint, and what is refused again is
    /// rolled back alone and recorded in `quarantine` (with the message as received) while the
    /// rest — checkpoints and high-water marks included — commits, so the gateway's batch is acked
    /// and dropped. Returns what was quarantined (empty unless careful).
    @discardableResult
    public func write(_ db: PostgresConnection, _ batch: WriteBatch, careful: Bool = false) throws -> [Quarantined] {
        let checkpoints = try Self.packCheckpoints(batch.checkpoints)
        let state = String(decoding: try JSONEncoder().encode(batch.aggregatorState), as: UTF8.self)
        let notifierStates = try Self.encodeNotifierStates(batch.notifierStates)
        return try db.transaction { db in
            // Whatever the server's default: an ack promises the batch survives a crash of the
            // server, so its commit must reach the disk before the reply (issue 19).
            try db.execute("SET LOCAL synchronous_commit = on")
            var quarantined: [Quarantined] = []
            if careful {
                quarantined = try writeIsolated(db, batch)
            } else {
                for part in Self.derivedParts { try part.write(self, db, batch) }
                try writeCounters(db, batch)
                if !batch.rawSightings.isEmpty { try writeRaw(db, batch.rawSightings) }
            }
            if !batch.forgottenDevices.isEmpty {
                // Before the checkpoints: a device forgotten and heard again keeps its new one.
                try db.query("DELETE FROM device_state WHERE site_id = $1 AND device_id = ANY($2::text[])",
                             [siteID, batch.forgottenDevices.map(\.rawValue)])
            }
            if !batch.checkpoints.isEmpty {
                // One binary parameter holds every checkpoint; each row takes its slice.
                try db.query("""
                    INSERT INTO device_state (site_id, device_id, state, checkpoint, ordinal)
                    SELECT $1, d, NULL, substring($3::bytea FROM o FOR n), k
                    FROM unnest($2::text[], $4::int[], $5::int[], $6::bigint[]) AS u(d, o, n, k)
                    ON CONFLICT (site_id, device_id) DO UPDATE
                      SET state = NULL, checkpoint = excluded.checkpoint, ordinal = excluded.ordinal, updated_at = now()
                    """, [siteID, batch.checkpoints.map(\.device.rawValue), PostgresBytes(checkpoints.bytes),
                          checkpoints.offsets, checkpoints.lengths, batch.checkpoints.map(\.ordinal)])
            }
            if !batch.notifierStates.isEmpty {
                try db.query("""
                    INSERT INTO notification_state (site_id, device_id, state)
                    SELECT $1, d, s::jsonb FROM unnest($2::text[], $3::text[]) AS u(d, s)
                    ON CONFLICT (site_id, device_id) DO UPDATE SET state = excluded.state, updated_at = now()
                    """, [siteID, batch.notifierStates.map(\.device.rawValue), notifierStates])
            }
            try db.query("""
                INSERT INTO aggregator_state (site_id, shards, state) VALUES ($1, $2, $3::jsonb)
                ON CONFLICT (site_id, shards) DO UPDATE SET state = excluded.state, updated_at = now()
                """, [siteID, checkpointKey, state])
            if !batch.progress.isEmpty {
                let marks = batch.progress.sorted { $0.key < $1.key }
                try db.query("""
                    INSERT INTO gateway_progress (site_id, gateway_id, boot, shard, seq)
                    SELECT $1, g, b, k, s FROM unnest($2::text[], $3::text[], $4::int[], $5::bigint[]) AS u(g, b, k, s)
                    ON CONFLICT (site_id, gateway_id, boot, shard) DO UPDATE
                      SET seq = greatest(gateway_progress.seq, excluded.seq), committed_at = now()
                    """, [siteID, marks.map(\.key.gateway), marks.map(\.key.boot), marks.map { Int32($0.key.shard) },
                          marks.map { Int64($0.value) }])
            }
            return quarantined
        }
    }

    /// The number of the last write that committed (`AggregatorCheckpoint.writeNumber`, 0 when
    /// none). After a failure whose outcome is unknown (the connection dropped around COMMIT) the
    /// writer reads it back: a write with a number up to it is stored and must not be written again.
    public func committedWrite(_ db: PostgresConnection) throws -> Int {
        guard let row = try db.query("""
            SELECT coalesce((state->>'writeNumber')::bigint, 0) FROM aggregator_state WHERE site_id = $1 AND shards = $2
            """, [siteID, checkpointKey]).first else { return 0 }
        return try row.int(0)
    }

    /// The checkpoints in the compact binary encoding (one encoder for all), packed into one buffer, with each one's
    /// 1-based offset (SQL `substring`) and length.
    static func packCheckpoints(_ checkpoints: [DeviceCheckpoint]) throws -> (bytes: [UInt8], offsets: [Int], lengths: [Int]) {
        let encoder = CompactBinaryEncoder()
        var bytes: [UInt8] = []
        var offsets: [Int] = [], lengths: [Int] = []
        offsets.reserveCapacity(checkpoints.count)
        lengths.reserveCapacity(checkpoints.count)
        for cp in checkpoints {
            let start = bytes.count
            try encoder.encode(cp, appendingTo: &bytes)
            offsets.append(start + 1)
            lengths.append(bytes.count - start)
        }
        return (bytes, offsets, lengths)
    }

    /// The tables of rows derived from the batches (not attributable to one message), in write order.
    static let derivedParts: [(table: String, write: @Sendable (AggregatorStore, PostgresConnection, WriteBatch) throws -> Void)] = [
        ("devices", { try $0.writeDevices($1, $2) }), ("visits", { try $0.writeVisits($1, $2) }),
        ("journeys", { try $0.writeJourneys($1, $2) }), ("transitions", { try $0.writeTransitions($1, $2) }),
        ("region_events", { try $0.writeEvents($1, $2) }), ("entrance_heard", { try $0.writeEntranceHeard($1, $2) }),
        ("notifications", { try $0.writeNotifications($1, $2) }),
    ]

    func writeDevices(_ db: PostgresConnection, _ b: WriteBatch) throws {
        if !b.devices.isEmpty {
            let d = b.devices.sorted { $0.key < $1.key }
            try db.query("""
                INSERT INTO devices (site_id, device_id, kind, first_seen, last_seen)
                SELECT $1, id, split_part(id, ':', 1), to_timestamp(f), to_timestamp(l)
                FROM unnest($2::text[], $3::float8[], $4::float8[]) AS u(id, f, l)
                ON CONFLICT (site_id, device_id) DO UPDATE
                  SET first_seen = least(devices.first_seen, excluded.first_seen),
                      last_seen = greatest(devices.last_seen, excluded.last_seen)
                """, [siteID, d.map(\.key.rawValue), d.map(\.value.first), d.map(\.value.last)])
        }
    }

    func writeVisits(_ db: PostgresConnection, _ b: WriteBatch) throws {
        if !b.visits.isEmpty {
            try db.query("""
                INSERT INTO visits (site_id, device_id, region_id, entered_at, exited_at, dwell_s, inferred)
                SELECT $1, d, r, to_timestamp(e), to_timestamp(x), x - e, i
                FROM unnest($2::text[], $3::text[], $4::float8[], $5::float8[], $6::bool[]) AS u(d, r, e, x, i)
                ON CONFLICT DO NOTHING
                """, [siteID, b.visits.map(\.device.rawValue), b.visits.map(\.region), b.visits.map(\.entered),
                      b.visits.map(\.exited), b.visits.map(\.inferred)])
        }
    }

    func writeJourneys(_ db: PostgresConnection, _ b: WriteBatch) throws {
        let encoder = JSONEncoder()
        if !b.journeys.isEmpty {
            // Insert the journeys and attach the visits they cover (written earlier, possibly in
            // this same transaction) in one statement.
            try db.query("""
                WITH j AS (
                    INSERT INTO journeys (site_id, device_id, started_at, ended_at, duration_s, regions)
                    SELECT $1, d, to_timestamp(s), to_timestamp(e), e - s, ARRAY(SELECT jsonb_array_elements_text(r::jsonb))
                    FROM unnest($2::text[], $3::float8[], $4::float8[], $5::text[]) AS u(d, s, e, r)
                    ON CONFLICT DO NOTHING
                    RETURNING journey_id, site_id, device_id, started_at, ended_at)
                UPDATE visits v SET journey_id = j.journey_id FROM j
                WHERE v.site_id = j.site_id AND v.device_id = j.device_id AND v.journey_id IS NULL
                  AND v.entered_at >= j.started_at AND v.entered_at <= j.ended_at
                """, [siteID, b.journeys.map(\.device.rawValue), b.journeys.map(\.started), b.journeys.map(\.ended),
                      try b.journeys.map { String(decoding: try encoder.encode($0.regions), as: UTF8.self) }])
        }
    }

    func writeTransitions(_ db: PostgresConnection, _ b: WriteBatch) throws {
        if !b.transitions.isEmpty {
            try db.query("""
                INSERT INTO transitions (site_id, device_id, from_region, to_region, at, inferred)
                SELECT $1, d, f, t, to_timestamp(a), i
                FROM unnest($2::text[], $3::text[], $4::text[], $5::float8[], $6::bool[]) AS u(d, f, t, a, i)
                ON CONFLICT DO NOTHING
                """, [siteID, b.transitions.map(\.device.rawValue), b.transitions.map(\.from), b.transitions.map(\.to),
                      b.transitions.map(\.t), b.transitions.map(\.inferred)])
        }
    }

    func writeEvents(_ db: PostgresConnection, _ b: WriteBatch) throws {
        if !b.events.isEmpty {
            try db.query("""
                INSERT INTO region_events (site_id, device_id, at, kind, region_id, proximity, distance_m)
                SELECT $1, d, to_timestamp(a), k, r, p, m
                FROM unnest($2::text[], $3::float8[], $4::text[], $5::text[], $6::text[], $7::float8[])
                     WITH ORDINALITY AS u(d, a, k, r, p, m, n)
                ORDER BY n  -- seq (schema 0007) follows the engine's order
                ON CONFLICT DO NOTHING
                """, [siteID, b.events.map(\.device.rawValue), b.events.map(\.t), b.events.map(\.kind), b.events.map(\.region),
                      b.events.map(\.proximity), b.events.map(\.distanceM)])
        }
    }

    func writeEntranceHeard(_ db: PostgresConnection, _ b: WriteBatch) throws {
        if !b.entranceHeard.isEmpty {
            let e = Array(b.entranceHeard)
            try db.query("""
                INSERT INTO entrance_heard (site_id, region_id, device_id, hour, first_heard_at, last_heard_at)
                SELECT $1, r, d, to_timestamp(h), to_timestamp(f), to_timestamp(l)
                FROM unnest($2::text[], $3::text[], $4::float8[], $5::float8[], $6::float8[]) AS u(r, d, h, f, l)
                ON CONFLICT (site_id, region_id, device_id, hour) DO UPDATE
                  SET first_heard_at = least(entrance_heard.first_heard_at, excluded.first_heard_at),
                      last_heard_at = greatest(entrance_heard.last_heard_at, excluded.last_heard_at)
                """, [siteID, e.map(\.key.region), e.map(\.key.device.rawValue), e.map(\.key.hour), e.map(\.value.first), e.map(\.value.last)])
        }
    }
}
