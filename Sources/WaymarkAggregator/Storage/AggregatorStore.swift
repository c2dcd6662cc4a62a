import Foundation
import WaymarkCore
import WaymarkFusion
import WaymarkNotify
import WaymarkPostgres

/// The aggregator's PostgreSQL side: checks the schema, mirrors the site file into the topology
/// tables, loads the checkpoint at start, and writes each `WriteBatch` in one transaction.
/// Runs on the writer thread with that thread's `PostgresConnection`.
public struct AggregatorStore: Sendable {
    public let siteID: String
    /// The `aggregator_state` row of this aggregator (`ShardOwnership.checkpointKey`; '' for the whole site).
    public let checkpointKey: String
    /// Migrations of schema/ this aggregator needs (0001–0014).
    static let requiredVersions = Array(1...14)

    public init(siteID: String, checkpointKey: String = "") {
        self.siteID = siteID
        self.checkpointKey = checkpointKey
    }

    /// Fails with a hint when `waymark db migrate` has not been run.
    public func checkSchema(_ db: PostgresConnection) throws {
        let applied = Set(try PostgresMigrator.appliedVersions(db))
        let missing = Self.requiredVersions.filter { !applied.contains($0) }
        guard missing.isEmpty else {
            throw PostgresError(kind: .usage, operation: "check the schema",
                                message: "migrations \(missing.map { String(format: "%04d", $0) }.joined(separator: ", ")) are not applied to \(db.maskedURL)",
                                hint: "run `waymark db migrate --database URL` first")
        }
    }

    /// Upserts the site, its gateways, regions and edges; rows no longer in the file are flagged
    /// `in_site_file = false` (their history stays).
    public func syncSite(_ db: PostgresConnection, _ site: Site) throws {
        try db.transaction { db in
            try db.query("INSERT INTO sites (site_id) VALUES ($1) ON CONFLICT (site_id) DO UPDATE SET updated_at = now()", [siteID])
            try db.query("UPDATE gateways SET in_site_file = false WHERE site_id = $1", [siteID])
            try db.query("UPDATE regions SET in_site_file = false WHERE site_id = $1", [siteID])
            try db.query("DELETE FROM region_edges WHERE site_id = $1", [siteID])
            for g in site.gateways {
                try db.query("""
                    INSERT INTO gateways (site_id, gateway_id, x_m, y_m, floor, rssi_offset_db, in_site_file)
                    VALUES ($1, $2, $3, $4, $5, $6, true)
                    ON CONFLICT (site_id, gateway_id) DO UPDATE SET x_m = excluded.x_m, y_m = excluded.y_m,
                      floor = excluded.floor, rssi_offset_db = excluded.rssi_offset_db, in_site_file = true
                    """, [siteID, g.id, g.position.x, g.position.y, g.floor, g.rssiOffsetDB])
            }
            for r in site.regions {
                try db.query("""
                    INSERT INTO regions (site_id, region_id, name, x_m, y_m, floor, radius_m, is_entrance, gateway_ids,
                                         ibeacon_uuid, ibeacon_major, ibeacon_minor, in_site_file)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::uuid, $11, $12, true)
                    ON CONFLICT (site_id, region_id) DO UPDATE SET name = excluded.name, x_m = excluded.x_m,
                      y_m = excluded.y_m, floor = excluded.floor, radius_m = excluded.radius_m,
                      is_entrance = excluded.is_entrance, gateway_ids = excluded.gateway_ids,
                      ibeacon_uuid = excluded.ibeacon_uuid, ibeacon_major = excluded.ibeacon_major,
                      ibeacon_minor = excluded.ibeacon_minor, in_site_file = true
                    """, [siteID, r.id, r.name, r.position.x, r.position.y, r.floor, r.radiusM, r.isEntrance, r.gateways,
                          r.ibeacon?.uuid.description, r.ibeacon?.major.map { Int($0) }, r.ibeacon?.minor.map { Int($0) }])
            }
            for e in site.edges {
                try db.query("""
                    INSERT INTO region_edges (site_id, from_region, to_region, length_m) VALUES ($1, $2, $3, $4)
                    ON CONFLICT DO NOTHING
                    """, [siteID, e.from, e.to, e.lengthM])
            }
        }
    }

    /// What a previous run committed.
    public struct Restored: Sendable {
        public var devices: [DeviceCheckpoint] = []
        public var progress: [ProgressTracker.Key: UInt64] = [:]
        public var state: AggregatorCheckpoint?
        /// Checkpoints that could not be decoded (an engine version change); those devices start fresh.
        public var undecodable = 0
        /// Each gateway's latest recorded status.
        public var statuses: [String: StatusSummary] = [:]
        /// The notification rules' state per device (`notification_state`).
        public var notifierStates: [NotifierCheckpoint] = []
        /// Notifier states that could not be decoded (those devices' rules start afresh).
        public var undecodableNotifierStates = 0
        /// When this aggregator has no checkpoint row of its own (its first start, or its shards
        /// just moved): the venue calibration held by the site's most recently written other row,
        /// one per fusion worker of that aggregator, to start from instead of the site file's
        /// values (`AggregatorCore.restore(calibrationSeed:)`); and that row's key.
        public var calibrationSeed: [FusionWorkerCheckpoint] = []
        public var calibrationSeedKey: String?
    }

    public func load(_ db: PostgresConnection) throws -> Restored {
        var r = Restored()
        for row in try db.query("SELECT gateway_id, boot, shard, seq FROM gateway_progress WHERE site_id = $1", [siteID]).rows {
            r.progress[.init(gateway: try row.string(0), boot: try row.string(1), shard: try row.int(2))] = try row.decode(UInt64.self, 3)
        }
        let decoder = JSONDecoder(), binary = CompactBinaryDecoder()
        // Binary checkpoints (schema 0005). A row with JSON `state` was last written by an
        // aggregator from before 0005 (this one always sets it to NULL): the JSON is the latest.
        // In the engine's order (schema 0009), so that the restored engine visits its devices as before.
        for row in try db.query("""
            SELECT state::text, checkpoint, ordinal FROM device_state WHERE site_id = $1 ORDER BY ordinal NULLS LAST, device_id
            """, [siteID]).rows {
            var cp: DeviceCheckpoint?
            if let json = try row.decode(String?.self, 0) {
                cp = try? decoder.decode(DeviceCheckpoint.self, from: Data(json.utf8))
            } else {
                cp = try? binary.decode(DeviceCheckpoint.self, from: try row.decode(PostgresBytes.self, 1).bytes)
            }
            cp?.ordinal = Int(try row.decode(Int64?.self, 2) ?? 0)
            if let cp { r.devices.append(cp) } else { r.undecodable += 1 }
        }
        for row in try db.query("""
            SELECT DISTINCT ON (gateway_id) gateway_id, state, boot, extract(epoch FROM reported_at)::float8
            FROM gateway_status WHERE site_id = $1
            ORDER BY gateway_id, received_at DESC
            """, [siteID]).rows {
            if let state = GatewayStatus.State(rawValue: try row.string(1)) {
                r.statuses[try row.string(0)] = StatusSummary(state: state, boot: try row.decode(String?.self, 2),
                                                              reportedAt: try row.decode(Double?.self, 3))
            }
        }
        (r.notifierStates, r.undecodableNotifierStates) = try loadNotifierStates(db)
        if let row = try db.query("SELECT state::text FROM aggregator_state WHERE site_id = $1 AND shards = $2",
                                  [siteID, checkpointKey]).first {
            r.state = try? decoder.decode(AggregatorCheckpoint.self, from: Data(try row.string(0).utf8))
        }
        if r.state == nil, let row = try db.query("""
            SELECT shards, state::text FROM aggregator_state WHERE site_id = $1 AND shards <> $2
            ORDER BY updated_at DESC, shards LIMIT 1
            """, [siteID, checkpointKey]).first,
           let other = try? decoder.decode(AggregatorCheckpoint.self, from: Data(try row.string(1).utf8)) {
            r.calibrationSeed = Self.calibrationSeed(from: other)
            if !r.calibrationSeed.isEmpty { r.calibrationSeedKey = try row.string(0) }
        }
        return r
    }

    /// The calibrations another aggregator of the site saved, one per fusion worker (from before
    /// workers: its single one), without its clock or gateway health: the venue's radio is the
    /// same whichever aggregator learned it; the rest was that aggregator's own.
    static func calibrationSeed(from other: AggregatorCheckpoint) -> [FusionWorkerCheckpoint] {
        let saved = other.fusionWorkers?.map(\.calibration) ?? [other.calibration]
        return saved.compactMap { $0 }.map { FusionWorkerCheckpoint(nextTick: -1, calibration: $0, gatewayHealth: nil) }
    }

    /// Creates the raw-sighting partitions around today and drops those older than `retentionDays`.
    public func maintainPartitions(_ db: PostgresConnection, now: Date, retentionDays: Int) throws -> (made: Int, dropped: Int) {
        let today = Self.utcDayStart(now)
        let made = try db.query("SELECT waymark_prepare_sighting_partitions($1::date, $2::date)",
                                [Self.utcDate(today - Self.day), Self.utcDate(today + 2 * Self.day)]).first?.int(0) ?? 0
        let dropped = try db.query("SELECT waymark_drop_sighting_partitions($1::date)",
                                   [Self.utcDate(today - Double(retentionDays) * Self.day)]).first?.int(0) ?? 0
        return (made, dropped)
    }

    static let day = 86_400.0

    /// Start of the UTC day of `t`, Unix seconds.
    static func utcDayStart(_ t: Date) -> Double { (t.timeIntervalSince1970 / day).rounded(.down) * day }

    /// `yyyy-MM-dd` of the UTC day of `t` (Unix seconds).
    static func utcDate(_ t: Double) -> String {
        let f = DateFormatter()
        f.dateFormat = "yyyy-MM-dd"
        f.timeZone = TimeZone(identifier: "UTC")
        f.locale = Locale(identifier: "en_US_POSIX")
        return f.string(from: Date(timeIntervalSince1970: t))
    }
}
