import Foundation
import WaymarkReports

/// Bar charts of a report table, drawn as inline SVG on the server (no script, no external
/// library): the report's first figure (its first numeric column, e.g. `visits`) summed per region
/// and, when the report has periods, summed per period in time order. Pure: table in, SVG text out.
enum ReportChart {
    struct Bar: Equatable {
        var label: String
        var value: Double
    }

    /// One chart: a title and its bars, in display order.
    struct Chart: Equatable {
        var title: String
        var bars: [Bar]
    }

    /// Columns that name what a row is about, in order of preference for the per-category chart.
    static let categoryColumns = ["region_name", "region_id", "from_region", "entrance_id", "gateway_id", "rule_id", "path"]
    static let periodColumns = ["period_start", "hour", "day"]
    /// More bars than this are cut to the largest ones (the table below has every row).
    static let maxBars = 30

    /// The charts that make sense for `table` (none when it has no numeric column or no rows).
    static func charts(for table: ReportTable) -> [Chart] {
        guard !table.rows.isEmpty,
              let measure = table.columns.firstIndex(where: { ($0.kind == .integer || $0.kind == .decimal) && !$0.name.hasSuffix("_id") })
        else { return [] }
        let name = table.columns[measure].name
        var charts: [Chart] = []
        if let category = categoryColumns.lazy.compactMap({ table.columnIndex($0) }).first {
            let bars = sum(table, by: category, measure: measure)
                .sorted { $0.value != $1.value ? $0.value > $1.value : $0.label < $1.label }
            charts.append(Chart(title: "\(name) by \(table.columns[category].name)", bars: Array(bars.prefix(maxBars))))
        }
        if let period = periodColumns.lazy.compactMap({ table.columnIndex($0) }).first {
            let bars = sum(table, by: period, measure: measure).sorted { $0.label < $1.label }
            if bars.count > 1 { charts.append(Chart(title: "\(name) by \(table.columns[period].name)", bars: Array(bars.suffix(maxBars)))) }
        }
        return charts
    }

    /// `measure` summed per distinct value of column `key` (a distinct-device count summed over
    /// regions is still shown per region, never added across rows of one region and period).
    static func sum(_ table: ReportTable, by key: Int, measure: Int) -> [Bar] {
        var totals: [String: Double] = [:]
        var order: [String] = []
        for row in table.rows {
            let label = ReportsPage.display(row[key])
            let value: Double
            switch row[measure] {
            case .integer(let i): value = Double(i)
            case .decimal(let d) where d.isFinite: value = d
            default: continue
            }
            if totals[label] == nil { order.append(label) }
            totals[label, default: 0] += value
        }
        return order.map { Bar(label: $0, value: totals[$0]!) }
    }

    /// A horizontal bar chart: one row per bar, label on the left, value at the bar's end.
    static func svg(_ chart: Chart, id: String) -> String {
        let rowHeight = 18, labelWidth = 220, barWidth = 420, valueWidth = 80, top = 24
        let height = top + rowHeight * chart.bars.count + 6
        let width = labelWidth + barWidth + valueWidth
        let largest = chart.bars.map(\.value).max() ?? 0
        var out = """
            <svg class="chart" id="\(id)" xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" \
            viewBox="0 0 \(width) \(height)" role="img" aria-label="\(HTML.escape(chart.title))">
            <text x="0" y="14" class="chart-title">\(HTML.escape(chart.title))</text>
            """
        for (i, bar) in chart.bars.enumerated() {
            let y = top + i * rowHeight
            let w = largest > 0 ? max(0, bar.value / largest * Double(barWidth)) : 0
            let label = bar.label.count > 32 ? String(bar.label.prefix(31)) + "…" : bar.label
            out += """
                <text x="\(labelWidth - 6)" y="\(y + 13)" text-anchor="end">\(HTML.escape(label))</text>\
                <rect class="bar" x="\(labelWidth)" y="\(y + 3)" width="\(String(format: "%.1f", w))" height="\(rowHeight - 6)"><title>\(HTML.escape(bar.label)): \(format(bar.value))</title></rect>\
                <text x="\(labelWidth + Int(w.rounded()) + 4)" y="\(y + 13)">\(format(bar.value))</text>

                """
        }
        return out + "</svg>"
    }

    static func format(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(format: "%.1f", v)
    }

    /// Every chart of `table` as SVG, or "" when there is none.
    static func html(for table: ReportTable) -> String {
        charts(for: table).enumerated().map { svg($1, id: "report-chart-\($0)") }.joined(separator: "\n")
    }
}
