import Testing
import WaymarkReports
@testable import WaymarkConsole

@Suite struct ReportChartTests {
    static let traffic = ReportTable(
        title: "traffic",
        columns: [.init("period_start", .timestamp), .init("region_id", .text), .init("region_name", .text),
                  .init("visits", .integer), .init("devices", .integer)],
        rows: [
            [.timestamp("2026-06-01T00:00:00Z"), .text("lobby"), .text("Lobby"), .integer(40), .integer(30)],
            [.timestamp("2026-06-01T00:00:00Z"), .text("cafe"), .text("Café <&>"), .integer(10), .integer(9)],
            [.timestamp("2026-06-02T00:00:00Z"), .text("lobby"), .text("Lobby"), .integer(20), .integer(18)],
            [.timestamp("2026-06-02T00:00:00Z"), .text("cafe"), .text("Café <&>"), .null, .integer(0)],
        ])

    @Test func theFirstFigureIsSummedPerRegionAndPerPeriod() {
        let charts = ReportChart.charts(for: Self.traffic)
        #expect(charts.map(\.title) == ["visits by region_name", "visits by period_start"])
        #expect(charts[0].bars == [.init(label: "Lobby", value: 60), .init(label: "Café <&>", value: 10)])
        #expect(charts[1].bars == [.init(label: "2026-06-01T00:00:00Z", value: 50), .init(label: "2026-06-02T00:00:00Z", value: 20)])
    }

    @Test func barsAreProportionalAndLabelsEscaped() {
        let svg = ReportChart.svg(ReportChart.charts(for: Self.traffic)[0], id: "c")
        #expect(svg.contains(#"width="420.0""#), "the largest bar spans the chart")
        #expect(svg.contains(#"width="70.0""#), "10 of 60 is a sixth of it")
        #expect(svg.contains("Café &lt;&amp;&gt;") && !svg.contains("<&>"))
        #expect(svg.components(separatedBy: "<rect ").count - 1 == 2)
    }

    @Test func noChartWithoutRowsOrFigures() {
        #expect(ReportChart.charts(for: ReportTable(title: "t", columns: Self.traffic.columns)).isEmpty)
        let textOnly = ReportTable(title: "t", columns: [.init("region_id", .text)], rows: [[.text("a")]])
        #expect(ReportChart.charts(for: textOnly).isEmpty)
        #expect(ReportChart.html(for: textOnly).isEmpty)
    }
}
