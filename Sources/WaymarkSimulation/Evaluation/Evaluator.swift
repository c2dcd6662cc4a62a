public import WaymarkCore

/// Scores what a system recorded against ground truth. Every figure is defined here:
///
/// - **Current-region accuracy (exact)**: over the time devices are truly inside a region (the sum
///   of the true visits' durations), the fraction during which the system's current region is that
///   region. The current region holds from each `location` change until the next; before a
///   device's first change it has none. Time outside every region (walking between two regions'
///   radii, before arrival, after departure) is not scored here: it has no single right answer
///   while an exit is being buffered, and is covered by exit latency and flaps instead.
/// - **Within one hop**: as exact, but the system's region may also be adjacent in the beacon
///   graph to the true one.
/// - **Visit recall**: the fraction of true visits that some recorded visit of the same device and
///   region overlaps (closed intervals). **Visit precision**: the fraction of recorded visits
///   (inferred ones included) that overlap some true visit of the same device and region.
/// - **Path accuracy**: 1 − the mean, over devices with any true or recorded visit, of the
///   Levenshtein distance between the true and the recorded region sequences (visits in order of
///   entry, consecutive repeats merged, inferred visits included) divided by the longer length.
/// - **Entry / exit latency**: per device and region, true and recorded (non-inferred) visits are
///   grouped into clusters joined by overlaps (a recorded visit spanning two true ones, or a true
///   visit split into several recorded ones, is one cluster). For each cluster with both kinds:
///   the first recorded entry minus the first true entry, and the last recorded exit minus the
///   last true exit. Exits are left out when the true exit lies within `exit_delay_s` + 5 s
///   of the end of the truth (the run ended before the system could close the visit). Reported as
///   the 50th and 95th percentiles (linear interpolation between order statistics). The exit time a
///   system records may be back-dated to its last evidence; **exit reported after** measures
///   instead when the visit was reported (the `t` of the replay `visit` line; for the naive rule,
///   the moment its region changes) after the latest overlapping true exit, so it includes the
///   exit buffer (`exit_delay_s`) when the device left into no region. **Into no region** restricts
///   that to exits after which the device truly entered no region within `exit_delay_s` (it left
///   the venue or stood between regions): there the expected figure is `exit_delay_s` plus the
///   time to notice the device is no longer heard.
/// - **Live region published after**: for each recorded change to a region (dated at the
///   evidence, as the smoothed history decided it), how long until the live region (`live` lines,
///   published at once by the engine) first showed that region: the first live report of it at or
///   after the change, or 0 when the live region already showed it since the previous change.
///   Only for outputs with `live` lines.
/// - **Flaps per device-hour**: location changes to a region that the device was not truly in at
///   any time within `flapToleranceS` of the change, divided by the device-hours in the venue.
///   Each flap is also counted by kind: of a stationary device; of a moving device truly inside
///   another region at the change (noise while it stays); or of one truly between regions (a
///   region it walks past, or a door or corridor it passes near, read as entered).
public struct Evaluator: Sendable {
    public let site: Site
    /// How far (s) a change to a region may lie from a true visit of it and not count as a flap.
    public var flapToleranceS: Double = 10

    public init(site: Site) { self.site = site }

    public func score(truth: TruthData, run: RecordedRun) -> SystemScore {
        var score = SystemScore()
        let exitCutoff = truth.end - site.fusion.exitDelayS - 5
        var editSum = 0.0
        var pathDevices = 0
        for d in truth.visits.indices {
            let trueVisits = truth.visits[d]
            let locations = d < run.locations.count ? run.locations[d] : []
            let visits = d < run.visits.count ? run.visits[d] : []

            // Time-weighted current-region accuracy.
            for v in trueVisits {
                forEachSegment(of: locations, from: v.entered, to: v.exited) { region, length in
                    score.scoredSeconds += length
                    guard let region, region >= 0, v.region >= 0 else { return }
                    if region == v.region { score.exactSeconds += length }
                    if site.graph.areAdjacent(region, v.region) { score.withinHopSeconds += length }
                }
            }

            // Visits.
            score.trueVisits += trueVisits.count
            score.recordedVisits += visits.count
            score.inferredVisits += visits.filter(\.inferred).count
            for v in trueVisits where visits.contains(where: { overlaps($0, v) }) { score.matchedTrueVisits += 1 }
            for r in visits where trueVisits.contains(where: { overlaps(r, $0) }) { score.matchedRecordedVisits += 1 }
            latencies(truth: trueVisits, recorded: visits.filter { !$0.inferred }, exitCutoff: exitCutoff, into: &score)

            // Paths.
            let a = Self.sequence(trueVisits), b = Self.sequence(visits)
            if !a.isEmpty || !b.isEmpty {
                editSum += Double(Self.editDistance(a, b)) / Double(max(a.count, b.count))
                pathDevices += 1
            }

            // Live latency.
            if d < run.live.count && !run.live[d].isEmpty {
                liveLatencies(recorded: locations, live: run.live[d], into: &score)
            }

            // Flaps.
            var previous: Int?? = .none
            for change in locations {
                defer { previous = .some(change.region) }
                if case .some(let p) = previous, p == change.region { continue }
                guard let r = change.region else { continue }
                let explained = trueVisits.contains {
                    $0.region == r && $0.entered - flapToleranceS <= change.t && change.t <= $0.exited + flapToleranceS
                }
                guard !explained else { continue }
                score.flaps += 1
                if d < truth.stationary.count && truth.stationary[d] {
                    score.flapsOfStationaryDevices += 1
                } else if trueVisits.contains(where: { $0.entered <= change.t && change.t <= $0.exited }) {
                    score.flapsInAnotherRegion += 1
                } else {
                    score.flapsBetweenRegions += 1
                }
            }
        }
        score.pathAccuracy = pathDevices > 0 ? 1 - editSum / Double(pathDevices) : 1
        score.deviceHours = truth.deviceHours
        score.entryLatencies.sort()
        score.exitLatencies.sort()
        score.exitReportLatencies.sort()
        score.exitToNoRegionReportLatencies.sort()
        score.liveLatencies.sort()
        return score
    }

    /// Both lists sorted by time: one pass over `live` (a cursor) for all the changes.
    func liveLatencies(recorded: [LocationChange], live: [LocationChange], into score: inout SystemScore) {
        var previousChange = -Double.infinity
        var previousRegion: Int?? = .none
        var next = 0                  // first live report after the change being looked at
        var current: Int? = nil       // the live region at that change
        var lastShown: [Int: Double] = [:]  // when the live region last showed each region
        for change in recorded {
            defer { previousChange = change.t; previousRegion = .some(change.region) }
            while next < live.count && live[next].t <= change.t {
                current = live[next].region
                if let r = current { lastShown[r] = live[next].t }
                next += 1
            }
            guard let region = change.region, previousRegion != .some(region) else { continue }
            // Shown since the previous change, or showing it now: no delay.
            if current == region || lastShown[region].map({ $0 >= previousChange }) == true {
                score.liveLatencies.append(0)
                continue
            }
            if let first = live[next...].first(where: { $0.region == region }) {
                score.liveLatencies.append(first.t - change.t)
            }
        }
    }

    /// Groups one device's true and recorded visits of each region into clusters linked by
    /// overlaps (one recorded visit spanning two true ones, or a true visit split into several
    /// recorded ones, form one cluster) and records one entry and one exit latency per cluster
    /// that holds both kinds: first recorded entry − first true entry, last recorded exit − last
    /// true exit.
    func latencies(truth: [ScoredVisit], recorded: [ScoredVisit], exitCutoff: Double, into score: inout SystemScore) {
        let all = (truth.map { ($0, true) } + recorded.map { ($0, false) })
            .sorted { ($0.0.region, $0.0.entered) < ($1.0.region, $1.0.entered) }
        var i = 0
        while i < all.count {
            let region = all[i].0.region
            var end = all[i].0.exited
            var j = i + 1
            while j < all.count, all[j].0.region == region, all[j].0.entered <= end {
                end = max(end, all[j].0.exited)
                j += 1
            }
            let cluster = all[i..<j]
            let t = cluster.filter(\.1).map(\.0), r = cluster.filter { !$0.1 }.map(\.0)
            if let tIn = t.map(\.entered).min(), let rIn = r.map(\.entered).min(),
               let tOut = t.map(\.exited).max(), let rOut = r.map(\.exited).max() {
                score.entryLatencies.append(rIn - tIn)
                if tOut < exitCutoff {
                    score.exitLatencies.append(rOut - tOut)
                    if let reported = r.compactMap(\.reportedAt).max() {
                        score.exitReportLatencies.append(reported - tOut)
                        // Left into no region: no true visit starts within the exit buffer.
                        let next = truth.first { $0.entered >= tOut && $0.entered <= tOut + site.fusion.exitDelayS }
                        if next == nil { score.exitToNoRegionReportLatencies.append(reported - tOut) }
                    }
                }
            }
            i = j
        }
    }

    /// Calls `body` with the recorded region and the length of each piece of [from, to).
    func forEachSegment(of changes: [LocationChange], from: Double, to: Double, _ body: (Int?, Double) -> Void) {
        guard to > from else { return }
        // Index of the last change at or before `from`.
        var lo = 0, hi = changes.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if changes[mid].t <= from { lo = mid + 1 } else { hi = mid }
        }
        var i = lo - 1
        var t = from
        while t < to {
            let current: Int? = i >= 0 ? changes[i].region : nil
            let end = i + 1 < changes.count ? min(changes[i + 1].t, to) : to
            if end > t {
                body(current, end - t)
                t = end
            }
            i += 1
        }
    }

    func overlaps(_ a: ScoredVisit, _ b: ScoredVisit) -> Bool {
        a.region == b.region && a.entered <= b.exited && b.entered <= a.exited
    }

    /// Regions in order of entry with consecutive repeats merged.
    static func sequence(_ visits: [ScoredVisit]) -> [Int] {
        var out: [Int] = []
        for v in visits.sorted(by: { $0.entered < $1.entered }) where out.last != v.region { out.append(v.region) }
        return out
    }

    /// Levenshtein distance (insertions, deletions and substitutions each cost 1).
    static func editDistance(_ a: [Int], _ b: [Int]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var diagonal = row[0]
            row[0] = i
            for j in 1...b.count {
                let above = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1))
                diagonal = above
            }
        }
        return row[b.count]
    }
}
