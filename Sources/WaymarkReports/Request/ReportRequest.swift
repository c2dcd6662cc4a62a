/// One validated request for a report: which report, over which time range, for which region,
/// split into which periods. Built from the command line's strings by `parse`, which rejects
/// unknown names and malformed values with an error that lists the valid choices.
public struct ReportRequest: Equatable, Sendable {
    public var kind: ReportKind
    /// Start of the range, Unix seconds, inclusive.
    public var from: Int64
    /// End of the range, Unix seconds, exclusive.
    public var to: Int64
    /// Restrict to one region id, or nil for all regions.
    public var region: String?
    public var period: ReportPeriod
    /// For `paths`: how many paths of each length to list.
    public var limit: Int

    public init(kind: ReportKind, from: Int64, to: Int64, region: String? = nil,
                period: ReportPeriod = .day, limit: Int = 20) {
        self.kind = kind
        self.from = from
        self.to = to
        self.region = region
        self.period = period
        self.limit = limit
    }

    /// Validates the command-line values of `waymark report NAME --from --to [--region] [--by]`.
    ///
    /// A bare date given as `--to` means "through the end of that day", so
    /// `--from 2026-06-01 --to 2026-06-30` covers all of June.
    public static func parse(name: String, from: String, to: String, region: String? = nil,
                             by: String? = nil, limit: Int = 20) throws(ReportError) -> ReportRequest {
        guard let kind = ReportKind(rawValue: name.lowercased()) else { throw .unknownReport(name) }
        let start = try ReportDate.parse(from, option: "--from")
        let end = try ReportDate.parse(to, option: "--to")
        let endSeconds = end.isDateOnly ? end.seconds + 86_400 : end.seconds
        guard endSeconds > start.seconds else {
            throw ReportError(.badArgument,
                "--to (\(ReportDate.iso(endSeconds))) must be after --from (\(ReportDate.iso(start.seconds))); the range is [from, to)")
        }
        var period = kind.defaultPeriod
        if let by {
            guard let p = ReportPeriod(rawValue: by.lowercased()) else { throw .choice("--by", by, ReportPeriod.self) }
            period = p
        }
        if let region, region.isEmpty || region.count > 200 {
            throw ReportError(.badArgument, "--region must be a region id from the site file, such as 'entrance'")
        }
        guard (1...10_000).contains(limit) else {
            throw ReportError(.badArgument, "--limit \(limit) is out of range; use 1 to 10000")
        }
        return ReportRequest(kind: kind, from: start.seconds, to: endSeconds, region: region,
                             period: period, limit: limit)
    }

    /// The range for titles and logs, e.g. `2026-06-01T00:00:00Z to 2026-06-08T00:00:00Z`.
    public var rangeDescription: String { "\(ReportDate.iso(from)) to \(ReportDate.iso(to))" }
}
