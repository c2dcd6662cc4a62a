import Foundation
import WaymarkCore
import WaymarkNotify
import WaymarkPostgres

/// The notifications table (schema 0010): rows written with the batches that caused them, the
/// notifier's checkpoint, and what the next start must deliver again.
extension AggregatorStore {
    /// Inserts the write's notifications; one that is already stored (same deterministic id) is
    /// left as it is. A rule with a webhook starts its row `pending`.
    func writeNotifications(_ db: PostgresConnection, _ b: WriteBatch) throws {
        guard !b.notifications.isEmpty else { return }
        let n = b.notifications
        try db.query("""
            INSERT INTO notifications (site_id, notification_id, rule_id, kind, device_id, region_id, at, message, payload, webhook_status)
            SELECT $1, i::uuid, r, k, d, g, to_timestamp(a), m, p::json, CASE WHEN w THEN 'pending' END
            FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::float8[], $8::text[], $9::text[], $10::bool[])
                 AS u(i, r, k, d, g, a, m, p, w)
            ON CONFLICT (site_id, notification_id) DO NOTHING
            """, [siteID, n.map(\.id), n.map(\.rule), n.map(\.kind.rawValue), n.map(\.device.rawValue), n.map(\.region),
                  n.map(\.t), n.map(\.message), n.map { String(decoding: $0.json, as: UTF8.self) }, n.map(\.hasWebhook)])
    }

    /// The notifier's states as JSON text, one per checkpoint.
    static func encodeNotifierStates(_ states: [NotifierCheckpoint]) throws -> [String] {
        guard !states.isEmpty else { return [] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try states.map { String(decoding: try encoder.encode($0.state), as: UTF8.self) }
    }

    /// The notifier's checkpoint; states that do not decode are skipped and counted.
    func loadNotifierStates(_ db: PostgresConnection) throws -> (states: [NotifierCheckpoint], undecodable: Int) {
        var out: [NotifierCheckpoint] = [], bad = 0
        let decoder = JSONDecoder()
        for row in try db.query("SELECT device_id, state::text FROM notification_state WHERE site_id = $1 ORDER BY device_id", [siteID]).rows {
            guard let device = DeviceID(try row.string(0)),
                  let state = try? decoder.decode(NotifierDeviceState.self, from: Data(try row.string(1).utf8)) else {
                bad += 1
                continue
            }
            out.append(NotifierCheckpoint(device: device, state: state))
        }
        return (out, bad)
    }

    /// A stored notification that still has to be delivered somewhere.
    public struct Undelivered: Sendable {
        public var id: String
        public var rule: String
        public var device: DeviceID
        public var at: Double
        public var payload: [UInt8]
        public var needsMQTT: Bool
        public var needsWebhook: Bool
        public var webhookAttempts: Int
        /// When the row was committed (webhook give-up counts from here).
        public var storedAt: Double
    }

    /// Notifications of the last `maxAgeS` seconds not yet confirmed by the broker, or with a
    /// webhook still pending, oldest first (the outbox of a previous run).
    public func loadUndelivered(_ db: PostgresConnection, maxAgeS: Double, limit: Int) throws -> [Undelivered] {
        try db.query("""
            SELECT notification_id::text, rule_id, device_id, extract(epoch FROM at)::float8, payload::text,
                   mqtt_published_at IS NULL, coalesce(webhook_status = 'pending', false), webhook_attempts,
                   extract(epoch FROM created_at)::float8
            FROM notifications
            WHERE site_id = $1 AND (mqtt_published_at IS NULL OR webhook_status = 'pending')
              AND created_at > now() - make_interval(secs => $2)
            ORDER BY at, notification_id LIMIT $3
            """, [siteID, maxAgeS, limit]).rows.compactMap { row in
            guard let device = DeviceID(try row.string(2)) else { return nil }
            return Undelivered(id: try row.string(0), rule: try row.string(1), device: device, at: try row.double(3),
                               payload: Array(try row.string(4).utf8), needsMQTT: try row.bool(5), needsWebhook: try row.bool(6),
                               webhookAttempts: try row.int(7), storedAt: try row.double(8))
        }
    }
}
