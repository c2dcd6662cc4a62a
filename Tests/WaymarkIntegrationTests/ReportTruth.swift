import WaymarkReports

/// The figures every report should show, computed in Swift straight from the fixture's visits,
/// journeys, sightings and status history, without the SQL (ReportTruth+More for the rest).
/// Shares the report conventions only: UTC periods, a period counts when it starts in
/// [floor(from), to), visits belong to the period they entered in.
struct ReportTruth {
    let fixture: ReportFixture
    let from: Int64
    let to: Int64
    let period: ReportPeriod
    let region: String?

    struct Key: Hashable, CustomStringConvertible {
        var period: String
        var region: String
        var description: String { "\(period) \(region)" }
    }

    var length: Int64 {
        switch period {
        case .hour: 3600
        case .day: 86_400
        case .week: 604_800
        }
    }

    static func floor(_ t: Int64, _ period: ReportPeriod) -> Int64 {
        switch period {
        case .hour: return t - ((t % 3600) + 3600) % 3600
        case .day: return t - ((t % 86_400) + 86_400) % 86_400
        case .week:
            let day = floor(t, .day) / 86_400
            let isoDayOfWeek = ((day + 3) % 7 + 7) % 7  // 0 = Monday (1970-01-01 was a Thursday)
            return (day - isoDayOfWeek) * 86_400
        }
    }

    func floorP(_ t: Int64) -> Int64 { Self.floor(t, period) }

    /// Whether the period holding `t` is in the report (for period kind `p`).
    func inRange(_ t: Int64, _ p: ReportPeriod? = nil) -> Bool {
        let f = Self.floor(t, p ?? period)
        return f >= Self.floor(from, p ?? period) && f < to
    }

    func regionMatches(_ r: String) -> Bool { region == nil || region == r }

    /// traffic: visits, distinct devices, inferred visits.
    func traffic() -> [Key: [Int64]] {
        var out: [Key: (Int64, Set<String>, Int64)] = [:]
        for v in fixture.visits where inRange(v.entered) && regionMatches(v.region) {
            let k = Key(period: ReportDate.iso(floorP(v.entered)), region: v.region)
            var e = out[k] ?? (0, [], 0)
            e.0 += 1
            e.1.insert(v.device)
            if v.inferred { e.2 += 1 }
            out[k] = e
        }
        return out.mapValues { [$0.0, Int64($0.1.count), $0.2] }
    }

    /// dwell: count, p50, p90, mean, then the five bucket counts (as Double).
    func dwell() -> [Key: [Double]] {
        var groups: [Key: [Double]] = [:]
        for v in fixture.visits where !v.inferred && inRange(v.entered) && regionMatches(v.region) {
            groups[Key(period: ReportDate.iso(floorP(v.entered)), region: v.region), default: []].append(Double(v.exited - v.entered))
        }
        return groups.mapValues { values in
            let xs = values.sorted()
            let bounds: [Double] = [0, 300, 1200, 3600, 21_600, .infinity]
            let buckets = (0..<5).map { b in Double(xs.filter { $0 >= bounds[b] && $0 < bounds[b + 1] }.count) }
            return [Double(xs.count), Self.percentile(xs, 0.5), Self.percentile(xs, 0.9), xs.reduce(0, +) / Double(xs.count)] + buckets
        }
    }

    /// PostgreSQL's percentile_cont: linear interpolation between the closest ranks.
    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        let position = p * Double(sorted.count - 1)
        let lo = Int(position.rounded(.down)), hi = Int(position.rounded(.up))
        return sorted[lo] + (position - Double(lo)) * (sorted[hi] - sorted[lo])
    }

    /// occupancy: peak devices, average devices, device-hours, for every period in the range.
    func occupancy() -> [Key: [Double]] {
        var out: [Key: [Double]] = [:]
        var ps = Self.floor(from, period)
        while ps < to {
            let pe = ps + length
            for r in fixture.site.regions where regionMatches(r.id) {
                var moves: [(Int64, Int)] = []
                var presence: Int64 = 0
                for v in fixture.visits where v.region == r.id && v.exited > v.entered && v.entered < pe && v.exited > ps {
                    let s = max(v.entered, ps), e = min(v.exited, pe)
                    presence += e - s
                    moves.append((s, 1))
                    moves.append((e, -1))
                }
                guard presence > 0 else { continue }
                moves.sort { ($0.0, $0.1) < ($1.0, $1.1) }
                var level = 0, peak = 0
                for m in moves { level += m.1; peak = max(peak, level) }
                out[Key(period: ReportDate.iso(ps), region: r.id)] = [Double(peak), Double(presence) / Double(length), Double(presence) / 3600]
            }
            ps += length
        }
        return out
    }

    /// transitions: (from, to) → count, inferred, share of exits from `from` (over all regions).
    func transitions() -> [Key: [Double]] {
        var counts: [Key: (Int64, Int64)] = [:]
        var exits: [String: Int64] = [:]
        for t in fixture.transitions where inRange(t.at, .hour) {
            let k = Key(period: t.from, region: t.to)
            var e = counts[k] ?? (0, 0)
            e.0 += 1
            if t.inferred { e.1 += 1 }
            counts[k] = e
            exits[t.from, default: 0] += 1
        }
        var out: [Key: [Double]] = [:]
        for (k, e) in counts where region == nil || k.period == region || k.region == region {
            out[k] = [Double(e.0), Double(e.1), Double(e.0) / Double(exits[k.period]!)]
        }
        return out
    }
}
