import WaymarkPostgres
import WaymarkReports

extension ReportFixture {
    static func ts(_ seconds: Int64) -> String { ReportDate.iso(seconds) }

    /// The site, its gateways, regions and edges, as the aggregator writes them from the site file.
    func insertSite(into db: PostgresConnection) throws {
        try db.query("INSERT INTO sites (site_id) VALUES ($1)", [site.id])
        for g in site.gateways {
            try db.query("INSERT INTO gateways (site_id, gateway_id, x_m, y_m, floor) VALUES ($1, $2, $3, $4, $5)",
                         [site.id, g.id, g.position.x, g.position.y, g.floor])
        }
        for r in site.regions {
            try db.query("""
                INSERT INTO regions (site_id, region_id, name, x_m, y_m, floor, radius_m, is_entrance, gateway_ids)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                """, [site.id, r.id, r.name, r.position.x, r.position.y, r.floor, r.radiusM, r.isEntrance, r.gateways])
        }
        for e in site.edges {
            try db.query("INSERT INTO region_edges (site_id, from_region, to_region, length_m) VALUES ($1, $2, $3, $4)",
                         [site.id, e.from, e.to, e.lengthM])
        }
    }

    /// Journeys, visits, transitions and entrance sightings of the devices `include` selects, with
    /// COPY in one transaction (the report triggers see them as one statement per table).
    func insertMovement(into db: PostgresConnection, devices include: (String) -> Bool) throws {
        try db.execute("SET TimeZone = 'UTC'")
        let chosen = journeys.indices.filter { include(journeys[$0].device) }
        try db.transaction { db in
            try db.copy(into: "journeys", columns: ["site_id", "device_id", "started_at", "ended_at", "duration_s", "regions"]) { w in
                for i in chosen {
                    let j = journeys[i]
                    try w.row([site.id, j.device, Self.ts(j.started), Self.ts(j.ended), String(j.ended - j.started),
                               "{" + j.regions.joined(separator: ",") + "}"])
                }
            }
            var ids: [String: Int64] = [:]
            for row in try db.query("SELECT journey_id, device_id, started_at FROM journeys WHERE site_id = $1", [site.id]).rows {
                ids["\(try row.string(1))@\(try row.string(2))"] = try row.decode(Int64.self, 0)
            }
            func journeyID(_ index: Int) -> String? {
                let j = journeys[index]
                let key = "\(j.device)@\(Self.pgTimestamp(j.started))"
                return ids[key].map(String.init)
            }
            try db.copy(into: "visits", columns: ["site_id", "device_id", "region_id", "entered_at", "exited_at", "dwell_s", "inferred", "journey_id"]) { w in
                for v in visits where include(v.device) {
                    try w.row([site.id, v.device, v.region, Self.ts(v.entered), Self.ts(v.exited), String(v.exited - v.entered),
                               v.inferred ? "t" : "f", journeyID(v.journey)])
                }
            }
            try db.copy(into: "transitions", columns: ["site_id", "device_id", "from_region", "to_region", "at", "inferred"]) { w in
                for t in transitions where include(t.device) {
                    try w.row([site.id, t.device, t.from, t.to, Self.ts(t.at), t.inferred ? "t" : "f"])
                }
            }
            try db.copy(into: "entrance_heard", columns: ["site_id", "region_id", "device_id", "hour", "first_heard_at", "last_heard_at"]) { w in
                for h in heard where include(h.device) {
                    try w.row([site.id, h.region, h.device, Self.ts(h.hour), Self.ts(h.first), Self.ts(h.last)])
                }
            }
        }
    }

    /// Gateway status history, hourly ingest counters and rejections.
    func insertGatewayHealth(into db: PostgresConnection) throws {
        try db.copy(into: "gateway_status", columns: ["site_id", "gateway_id", "received_at", "state", "boot", "spool_depth", "spool_dropped"]) { w in
            for s in statuses {
                try w.row([site.id, s.gateway, Self.ts(s.at), s.online ? "online" : "offline", s.boot,
                           s.depth.map(String.init), s.dropped.map(String.init)])
            }
        }
        try db.copy(into: "gateway_ingest_hourly", columns: ["site_id", "gateway_id", "hour", "batches", "sightings", "last_batch_at"]) { w in
            for i in ingest {
                try w.row([site.id, i.gateway, Self.ts(i.hour), String(i.batches), String(i.sightings), Self.ts(i.last)])
            }
        }
        try db.copy(into: "gateway_rejections", columns: ["site_id", "gateway_id", "hour", "reason", "count"]) { w in
            for r in rejections { try w.row([site.id, r.gateway, Self.ts(r.hour), r.reason, String(r.count)]) }
        }
    }

    /// How PostgreSQL prints a whole-second timestamptz in a UTC session: `2026-06-01 09:00:00+00`.
    static func pgTimestamp(_ seconds: Int64) -> String {
        let iso = ReportDate.iso(seconds)
        return String(iso.prefix(10)) + " " + String(iso.dropFirst(11).prefix(8)) + "+00"
    }
}
