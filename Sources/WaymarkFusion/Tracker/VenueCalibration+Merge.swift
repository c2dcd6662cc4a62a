/// Pooling what several fusion workers (`FusionWorkers`) learned about the venue.
extension VenueCalibration {
    /// What `parts` — workers that all started from `base` at the last pooling — learned since,
    /// as one calibration: the counts of evidence are `base`'s plus every worker's new ones; every
    /// running estimate (the measured-power correction and its moments, the regression's decayed
    /// sums, each gateway's mean deviation) is the workers' mean weighted by the evidence each
    /// added to it. (Not `base` plus the sum of their changes: a running mean that forgets in fifty
    /// seconds has forgotten `base` within a minute, and summing four such changes counts the
    /// venue's level four times.) The derived values — exponent, room loss, applied offsets,
    /// reception tables — are recomputed from the result.
    static func merged(base: VenueCalibration, _ parts: [VenueCalibration]) -> VenueCalibration {
        guard parts.count > 1 else { return parts.first ?? base }
        var c = base
        let added = parts.map { max(0, $0.updates - base.updates) }
        let total = added.reduce(0, +)
        c.updates = base.updates + total
        if total > 0 {
            func mean(_ key: WritableKeyPath<VenueCalibration, Double>) {
                c[keyPath: key] = zip(parts, added).reduce(0) { $0 + $1.0[keyPath: key] * $1.1 } / total
            }
            for key in [\VenueCalibration.powerCorrectionDB, \.powerMean, \.powerSquare, \.sxx, \.sxz, \.szz, \.sxy, \.szy] {
                mean(key)
            }
        }
        for g in c.offsetSum.indices {
            let readings = parts.map { max(0, $0.offsetCount[g] - base.offsetCount[g]) }
            let all = readings.reduce(0, +)
            guard all > 0 else { continue }
            c.offsetCount[g] = base.offsetCount[g] + all
            c.offsetSum[g] = zip(parts, readings).reduce(0) { $0 + $1.0.offsetSum[g] * $1.1 } / all
            c.offsetSquare[g] = zip(parts, readings).reduce(0) { $0 + $1.0.offsetSquare[g] * $1.1 } / all
        }
        c.reception = ReceptionCalibration.merged(base: base.reception, parts.map(\.reception))
        c.refresh()
        return c
    }
}

extension ReceptionCalibration {
    /// Several workers' reception models as one (`VenueCalibration.merged`): per gateway and bin the
    /// mean of their decayed counts (so the rate is the opportunity-weighted mean of theirs, and the
    /// counts stay within the memory one model keeps); the opportunities learned since the start add
    /// up. Refreshed.
    static func merged(base: ReceptionCalibration, _ parts: [ReceptionCalibration]) -> ReceptionCalibration {
        var r = base
        let same = parts.filter { $0.gatewayCount == base.gatewayCount }
        guard !same.isEmpty else { return base }
        r.learned = base.learned + same.reduce(0) { $0 + max(0, $1.learned - base.learned) }
        let k = Double(same.count)
        for i in r.reported.indices {
            r.reported[i] = same.reduce(0) { $0 + $1.reported[i] } / k
            r.opportunities[i] = same.reduce(0) { $0 + $1.opportunities[i] } / k
        }
        r.refresh()
        return r
    }
}
