import WaymarkReports

/// Reports: any table report of `waymark report` for a chosen period, as bar charts
/// (`ReportChart`) and a table with a CSV download of exactly the same rows.
enum ReportsPage {
    static var tableReports: [ReportKind] { ReportKind.allCases.filter { $0 != .map } }

    static func display(_ value: ReportValue) -> String {
        switch value {
        case .null: ""
        case .text(let s), .timestamp(let s): s
        case .integer(let i): String(i)
        case .decimal(let d): d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(format: "%.3f", d)
        case .boolean(let b): b ? "true" : "false"
        }
    }

    struct Form {
        var name: String
        var from: String
        var to: String
        var by: String
        var region: String

        var query: String {
            "name=\(HTML.urlComponent(name))&from=\(HTML.urlComponent(from))&to=\(HTML.urlComponent(to))&by=\(HTML.urlComponent(by))"
                + (region.isEmpty ? "" : "&region=\(HTML.urlComponent(region))")
        }
    }

    static func html(site: String, form: Form, table: ReportTable?, error: String?) -> String {
        let options = tableReports.map { kind in
            "<option value=\"\(kind.rawValue)\"\(kind.rawValue == form.name ? " selected" : "")>\(kind.rawValue) — \(HTML.escape(kind.summary))</option>"
        }.joined()
        let periods = ["", "hour", "day", "week"].map { p in
            "<option value=\"\(p)\"\(p == form.by ? " selected" : "")>\(p.isEmpty ? "default" : p)</option>"
        }.joined()
        var result = ""
        if let error { result = "<p class=\"error\" id=\"report-error\">\(HTML.escape(error))</p>" }
        if let table {
            let numeric = Set(table.columns.indices.filter { table.columns[$0].kind == .integer || table.columns[$0].kind == .decimal })
            result = """
                <h2 id="report-title">\(HTML.escape(table.title))</h2>
                <p><a class="button" id="csv-download" href="/reports.csv?\(HTML.escape(form.query))" download>Download CSV</a>
                <span class="status">\(table.rows.count) rows</span></p>
                <div class="charts">\(ReportChart.html(for: table))</div>
                \(HTML.table(columns: table.columns.map(\.name), rows: table.rows.map { $0.map { HTML.escape(display($0)) } }, id: "report", numeric: numeric))
                """
        }
        let body = """
            <h1>Reports</h1>
            <form class="inline" method="get" action="/reports">
            <label>Report<select name="name">\(options)</select></label>
            <label>From<input name="from" value="\(HTML.escape(form.from))" placeholder="2026-06-01" required></label>
            <label>To<input name="to" value="\(HTML.escape(form.to))" placeholder="2026-06-07" required></label>
            <label>By<select name="by">\(periods)</select></label>
            <label>Region (optional)<input name="region" value="\(HTML.escape(form.region))"></label>
            <button>Show</button></form>
            <p class="status">Dates are UTC (YYYY-MM-DD, or ISO-8601 with a time); a bare "to" date includes that day. Reports count devices, not people (docs/reports.md).</p>
            \(result)
            """
        return HTML.page(title: "Reports", site: site, active: .reports, body: body)
    }
}
