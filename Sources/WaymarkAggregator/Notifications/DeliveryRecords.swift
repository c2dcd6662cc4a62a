import Foundation
import WaymarkPostgres

/// What the delivery thread has to write to the notification rows: confirmed publications,
/// webhook attempts, and final webhook states. Written in one transaction per round.
struct DeliveryRecords: Sendable {
    var published: [String] = []
    var attempts: [WebhookDispatcher.Attempt] = []
    /// Notification id → `dropped` or `cancelled`.
    var statuses: [(id: String, status: String)] = []

    var isEmpty: Bool { published.isEmpty && attempts.isEmpty && statuses.isEmpty }
    var count: Int { published.count + attempts.count + statuses.count }

    mutating func clear() {
        published.removeAll(keepingCapacity: true)
        attempts.removeAll(keepingCapacity: true)
        statuses.removeAll(keepingCapacity: true)
    }

    /// Keeps at most `limit` records, dropping the oldest; returns how many were dropped.
    mutating func trim(to limit: Int) -> Int {
        var over = count - limit
        guard over > 0 else { return 0 }
        let total = over
        let p = min(over, published.count); published.removeFirst(p); over -= p
        let a = min(over, attempts.count); attempts.removeFirst(a); over -= a
        statuses.removeFirst(min(over, statuses.count))
        return total
    }

    func write(_ db: PostgresConnection, site: String) throws {
        try db.transaction { db in
            if !attempts.isEmpty {
                let a = attempts
                try db.query("""
                    INSERT INTO webhook_attempts (site_id, notification_id, attempt, started_at, duration_ms, http_status, outcome, error)
                    SELECT $1, i::uuid, n, to_timestamp(s), d, h, o, e
                    FROM unnest($2::text[], $3::int[], $4::float8[], $5::float8[], $6::int[], $7::text[], $8::text[])
                         AS u(i, n, s, d, h, o, e)
                    WHERE EXISTS (SELECT 1 FROM notifications x WHERE x.site_id = $1 AND x.notification_id = u.i::uuid)
                    """, [site, a.map(\.id), a.map(\.attempt), a.map(\.startedAt), a.map(\.durationMS), a.map(\.httpStatus),
                          a.map(\.outcome), a.map(\.error)])
                try db.query("""
                    UPDATE notifications n SET
                      webhook_attempts = greatest(n.webhook_attempts, u.a),
                      webhook_status = CASE u.o WHEN 'delivered' THEN 'delivered' WHEN 'failed' THEN 'failed' ELSE n.webhook_status END,
                      webhook_delivered_at = CASE WHEN u.o = 'delivered' THEN to_timestamp(u.s + u.d / 1000) ELSE n.webhook_delivered_at END
                    FROM (SELECT DISTINCT ON (i) i, a, o, s, d
                          FROM unnest($2::text[], $3::int[], $4::text[], $5::float8[], $6::float8[]) WITH ORDINALITY AS x(i, a, o, s, d, k)
                          ORDER BY i, k DESC) u
                    WHERE n.site_id = $1 AND n.notification_id = u.i::uuid AND n.webhook_status = 'pending'
                    """, [site, a.map(\.id), a.map(\.attempt), a.map(\.outcome), a.map(\.startedAt), a.map(\.durationMS)])
            }
            if !statuses.isEmpty {
                try db.query("""
                    UPDATE notifications n SET webhook_status = u.s
                    FROM unnest($2::text[], $3::text[]) AS u(i, s)
                    WHERE n.site_id = $1 AND n.notification_id = u.i::uuid AND n.webhook_status = 'pending'
                    """, [site, statuses.map(\.id), statuses.map(\.status)])
            }
            if !published.isEmpty {
                try db.query("""
                    UPDATE notifications SET mqtt_published_at = now()
                    WHERE site_id = $1 AND notification_id = ANY($2::uuid[]) AND mqtt_published_at IS NULL
                    """, [site, published])
            }
        }
    }
}
