import WaymarkCore
import WaymarkReports

/// Gateways: the live status each gateway publishes (state, version, spool depth, clock offset)
/// beside today's health report from the database (last batch, batches, rejections, drops); and
/// the aggregators' statuses with the shards each owns.
enum GatewaysPage {
    static func html(venue: LiveVenue, health: ReportTable?, healthError: String?) -> String {
        var byGateway: [String: [ReportValue]] = [:]
        if let health, let idIndex = health.columnIndex("gateway_id") {
            for row in health.rows { if let id = row[idIndex].textValue { byGateway[id] = row } }
        }
        func cell(_ gateway: String, _ column: String) -> String {
            guard let health, let i = health.columnIndex(column), let row = byGateway[gateway] else { return "—" }
            return HTML.escape(ReportsPage.display(row[i]))
        }
        let rows = venue.site.gateways.sorted { ($0.floor, $0.id) < ($1.floor, $1.id) }.map { gw -> [String] in
            let live = venue.gateways[gw.id]
            let state = live?.state ?? "unknown"
            return [
                HTML.escape(gw.id), "\(gw.floor)",
                "<span class=\"badge \(HTML.escape(state))\" data-gateway=\"\(HTML.escape(gw.id))\">\(HTML.escape(state))</span>",
                HTML.escape(live?.version ?? "—"), live?.spoolDepth.map(String.init) ?? "—",
                live?.clockOffsetS.map { String(format: "%+.1f s", $0) } ?? "—",
                cell(gw.id, "last_seen"), cell(gw.id, "batches"), cell(gw.id, "rejected"), cell(gw.id, "spool_dropped"),
            ]
        }
        let body = """
            <h1>Gateways</h1>
            <p class="status" data-live>Live: the status each gateway publishes (clock offset: when the console received it minus the time the gateway stamped, delivery delay included; not shown for retained messages). Today (UTC): the gateway health report. <span id="live-updated"></span></p>
            \(healthError.map { "<p class=\"error\">\(HTML.escape($0))</p>" } ?? "")
            \(HTML.table(columns: ["gateway", "floor", "state", "version", "spool depth", "clock offset", "last batch", "batches today", "rejected today", "spool dropped today"],
                         rows: rows, id: "gateways", numeric: [1, 4, 5, 7, 8, 9]))
            \(aggregators(venue))
            """
        return HTML.page(title: "Gateways", site: venue.site.id, active: .gateways, body: body)
    }

    /// The aggregators' retained statuses, and whether every shard has exactly one running owner
    /// (docs/scaling.md §1): a shard without one is not fused (its batches wait in the gateways'
    /// spools), a shard with two is fused and written twice.
    static func aggregators(_ venue: LiveVenue) -> String {
        let rows = venue.aggregators.values.sorted { $0.key < $1.key }.map { a -> [String] in
            let shards = a.shards.map { list in
                list.map(String.init).joined(separator: ", ") + (a.shardCount.map { " of \($0)" } ?? "")
            } ?? "all"
            return [
                HTML.escape("aggregator/status" + (a.key.isEmpty ? "" : "/" + a.key)),
                "<span class=\"badge \(HTML.escape(a.state))\" data-aggregator=\"\(HTML.escape(a.key))\">\(HTML.escape(a.state))</span>",
                HTML.escape(shards), HTML.escape(a.version ?? "—"), a.statusTime.map(ISOTime.format) ?? "—",
            ]
        }
        var notes: [String] = []
        if let coverage = venue.shardCoverage {
            func list(_ shards: [Int]) -> String { shards.map(String.init).joined(separator: ", ") }
            if coverage.declaredCounts.count > 1 {
                notes.append("<p class=\"error\">The running aggregators split the site into different numbers of shards (\(list(coverage.declaredCounts))): give every aggregator and gateway the same count.</p>")
            }
            if !coverage.unowned.isEmpty {
                notes.append("<p class=\"error\">No running aggregator owns shard\(coverage.unowned.count == 1 ? "" : "s") \(list(coverage.unowned)) of \(coverage.count): those devices are not tracked; their batches wait in the gateways' spools.</p>")
            }
            if !coverage.doubled.isEmpty {
                notes.append("<p class=\"error\">Shard\(coverage.doubled.count == 1 ? "" : "s") \(list(coverage.doubled)) \(coverage.doubled.count == 1 ? "is" : "are") owned by more than one running aggregator: each fuses those devices and write their history twice; stop one.</p>")
            }
            if notes.isEmpty {
                notes.append("<p class=\"status\" id=\"shard-coverage\">\(coverage.count == 1 ? "The whole site has one running aggregator." : "Each of the \(coverage.count) shards has one running aggregator.")</p>")
            }
        } else {
            notes.append("<p class=\"error\">No aggregator is online: nothing is tracked or recorded until one connects.</p>")
        }
        return """
            <h2>Aggregators</h2>
            \(notes.joined(separator: "\n"))
            \(HTML.table(columns: ["status topic", "state", "shards", "version", "status time (UTC)"], rows: rows, id: "aggregators"))
            """
    }
}
