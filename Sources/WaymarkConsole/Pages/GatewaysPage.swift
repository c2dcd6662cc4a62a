import WaymarkCore
import WaymarkReports

/// Gateways: the live status each gateway publishes (state, version, spool depth, clock offset)
/// beside today's health report from the database (last batch, batches, rejections, drops).
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
            """
        return HTML.page(title: "Gateways", site: venue.site.id, active: .gateways, body: body)
    }
}
