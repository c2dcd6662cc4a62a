/// The foot-traffic reports `waymark report NAME` knows (DESIGN.md §5). Each one is a SQL function
/// `waymark_report_<name>(from, to, region, period)` in `schema/`, so an analyst can run the same
/// report by hand in `psql`; `map` draws the traffic and transitions reports as an SVG venue map.
public enum ReportKind: String, CaseIterable, Sendable {
    case traffic
    case dwell
    case occupancy
    case transitions
    case paths
    case capture
    case loyalty
    case heatmap
    case gateways
    case notifications
    case map

    /// One line for `--help` and for the error that lists the valid reports.
    public var summary: String {
        switch self {
        case .traffic: "visits and unique devices per region per period"
        case .dwell: "dwell-time percentiles (p50, p90) and buckets per region per period"
        case .occupancy: "peak and average devices present per region per period"
        case .transitions: "region-to-region transition counts and share of exits"
        case .paths: "most common journeys and sub-paths of 2 to 4 regions"
        case .capture: "entrance capture: passers-by heard but never inside versus visitors"
        case .loyalty: "new versus returning devices per period"
        case .heatmap: "visits on a day-of-week by hour-of-day grid"
        case .gateways: "gateway health: last seen, online time, batches, drops, spool depth"
        case .notifications: "notifications sent per rule and hour (or --by), devices reached, webhook delivery"
        case .map: "an SVG venue map: regions by visits, edges by transitions (needs --svg and --site)"
        }
    }

    /// Whether `--by hour|day|week` changes this report.
    public var usesPeriod: Bool {
        switch self {
        case .traffic, .dwell, .occupancy, .capture, .loyalty, .notifications: true
        case .transitions, .paths, .heatmap, .gateways, .map: false
        }
    }

    /// The period without `--by`: hours for notifications (the issue's "per rule and hour"), days otherwise.
    public var defaultPeriod: ReportPeriod { self == .notifications ? .hour : .day }

    /// The SQL function that computes the report (`map` reads `traffic` and `transitions`).
    public var sqlFunction: String? {
        self == .map ? nil : "waymark_report_\(rawValue)"
    }

    /// All report names with their summaries, one per line, for error messages and help.
    public static var choicesDescription: String {
        allCases.map { "  \($0.rawValue + String(repeating: " ", count: max(1, 13 - $0.rawValue.count)))\($0.summary)" }
            .joined(separator: "\n")
    }
}

/// How a report splits its time range: whole UTC hours, days, or ISO weeks (starting Monday).
public enum ReportPeriod: String, CaseIterable, Sendable {
    case hour
    case day
    case week
}

/// The output formats of `waymark report`.
public enum ReportFormat: String, CaseIterable, Sendable {
    case table
    case csv
    case json
}
