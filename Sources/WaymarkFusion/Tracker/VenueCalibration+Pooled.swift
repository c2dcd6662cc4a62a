/// The calibrations of several fusion workers (`FusionWorkers`) seen as one, for metrics and
/// summaries: every estimate weighed by the evidence behind it in each worker. Not used by any
/// engine (each worker goes on with its own).
extension VenueCalibration {
    static func pooled(_ parts: [VenueCalibration]) -> VenueCalibration {
        guard var c = parts.first else { preconditionFailure("pooled() needs at least one calibration") }
        guard parts.count > 1 else { return c }
        let total = parts.reduce(0) { $0 + $1.updates }
        func mean(_ value: (VenueCalibration) -> Double) -> Double {
            total > 0 ? parts.reduce(0) { $0 + value($1) * $1.updates } / total : parts.reduce(0) { $0 + value($1) } / Double(parts.count)
        }
        c.updates = total
        c.taught.seconds = parts.reduce(0) { $0 + $1.taught.seconds }
        c.taught.worth = parts.reduce(0) { $0 + $1.taught.worth }
        c.powerCorrectionDB = mean(\.powerCorrectionDB)
        c.pathLossExponent = mean(\.pathLossExponent)
        c.roomLossDB = mean(\.roomLossDB)
        c.powerMean = mean(\.powerMean)
        c.powerSquare = mean(\.powerSquare)
        let levelTotal = parts.reduce(0) { $0 + $1.levelEvidence }
        if parts.allSatisfy({ $0.levelTerms != nil }) {
            func levelMean(_ value: (LevelTerms) -> Double) -> Double {
                levelTotal > 0 ? parts.reduce(0) { $0 + value($1.levelTerms!) * $1.levelEvidence } / levelTotal
                    : parts.reduce(0) { $0 + value($1.levelTerms!) } / Double(parts.count)
            }
            c.levelTerms = LevelTerms(y: levelMean(\.y), x: levelMean(\.x), z: levelMean(\.z))
        }
        c.levelSeconds = levelTotal
        c.sxx = parts.reduce(0) { $0 + $1.sxx }
        c.sxz = parts.reduce(0) { $0 + $1.sxz }
        c.szz = parts.reduce(0) { $0 + $1.szz }
        c.sxy = parts.reduce(0) { $0 + $1.sxy }
        c.szy = parts.reduce(0) { $0 + $1.szy }
        for g in c.gatewayOffsetDB.indices {
            let readings = parts.reduce(0) { $0 + $1.offsetCount[g] }
            func gatewayMean(_ value: (VenueCalibration) -> Double) -> Double {
                readings > 0 ? parts.reduce(0) { $0 + value($1) * $1.offsetCount[g] } / readings : 0
            }
            c.gatewayOffsetDB[g] = gatewayMean { $0.gatewayOffsetDB[g] }
            c.offsetSum[g] = gatewayMean { $0.offsetSum[g] }
            c.offsetSquare[g] = gatewayMean { $0.offsetSquare[g] }
            c.applied[g] = Float(gatewayMean { Double($0.applied[g]) })
            c.offsetCount[g] = readings
        }
        c.reception = ReceptionCalibration.pooled(parts.map(\.reception))
        return c
    }
}

extension ReceptionCalibration {
    /// The counts of several models added up, and the factors fitted to the sum.
    static func pooled(_ parts: [ReceptionCalibration]) -> ReceptionCalibration {
        guard var r = parts.first else { preconditionFailure("pooled() needs at least one reception model") }
        for p in parts.dropFirst() where p.gatewayCount == r.gatewayCount {
            r.learned += p.learned
            for i in r.reported.indices {
                r.reported[i] += p.reported[i]
                r.opportunities[i] += p.opportunities[i]
            }
        }
        r.refresh()
        return r
    }
}
