extension ReportKind {
    /// The columns each report function returns, in order, with their types. `ReportRunner`
    /// checks the server's column names against this list, so a schema that drifted from the
    /// program fails loudly instead of printing mislabelled figures.
    public var columns: [ReportColumn] {
        switch self {
        case .traffic:
            [.init("period_start", .timestamp), .init("region_id", .text), .init("region_name", .text),
             .init("visits", .integer), .init("devices", .integer), .init("inferred_visits", .integer)]
        case .dwell:
            [.init("period_start", .timestamp), .init("region_id", .text), .init("region_name", .text),
             .init("visits", .integer), .init("p50_s", .decimal), .init("p90_s", .decimal), .init("mean_s", .decimal),
             .init("under_5m", .integer), .init("m5_20", .integer), .init("m20_60", .integer),
             .init("h1_6", .integer), .init("h6_plus", .integer)]
        case .occupancy:
            [.init("period_start", .timestamp), .init("region_id", .text), .init("region_name", .text),
             .init("peak_devices", .integer), .init("average_devices", .decimal), .init("device_hours", .decimal)]
        case .transitions:
            [.init("from_region", .text), .init("to_region", .text), .init("transitions", .integer),
             .init("inferred", .integer), .init("share_of_exits", .decimal)]
        case .paths:
            [.init("kind", .text), .init("length", .integer), .init("rank", .integer), .init("path", .text),
             .init("occurrences", .integer), .init("share", .decimal)]
        case .capture:
            [.init("period_start", .timestamp), .init("region_id", .text), .init("region_name", .text),
             .init("heard", .integer), .init("visitors", .integer), .init("passers_by", .integer),
             .init("capture_rate", .decimal)]
        case .loyalty:
            [.init("period_start", .timestamp), .init("devices", .integer), .init("new_devices", .integer),
             .init("returning_devices", .integer), .init("returning_share", .decimal)]
        case .heatmap:
            [.init("day_of_week", .integer), .init("day_name", .text)]
                + (0..<24).map { ReportColumn($0 < 10 ? "h0\($0)" : "h\($0)", .integer) }
                + [.init("total", .integer)]
        case .gateways:
            [.init("gateway_id", .text), .init("state", .text), .init("last_seen", .timestamp),
             .init("online_s", .decimal), .init("online_share", .decimal), .init("batches", .integer),
             .init("sightings", .integer), .init("rejected", .integer), .init("spool_dropped", .integer),
             .init("spool_depth_last", .integer), .init("spool_depth_max", .integer)]
        case .notifications:
            [.init("period_start", .timestamp), .init("rule_id", .text), .init("kind", .text),
             .init("notifications", .integer), .init("devices", .integer), .init("webhook_delivered", .integer),
             .init("webhook_pending", .integer), .init("webhook_failed", .integer), .init("mqtt_unconfirmed", .integer)]
        case .map:
            []
        }
    }

    /// The statement that runs the report, with every value bound as a parameter:
    /// $1 site, $2 from, $3 to, $4 region (NULL for all), $5 period, and for `paths` $6 limit.
    public var statement: String? {
        guard let function = sqlFunction else { return nil }
        let limit = self == .paths ? ", $6::integer" : ""
        return "SELECT * FROM \(function)($1::text, $2::timestamptz, $3::timestamptz, $4::text, $5::text\(limit))"
    }

    /// Whether `--region` narrows this report (loyalty is site-wide).
    public var acceptsRegion: Bool { self != .loyalty }
}
