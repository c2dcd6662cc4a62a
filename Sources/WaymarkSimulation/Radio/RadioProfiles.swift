public import WaymarkCore

extension RadioParameters {
    /// The physics of a radio profile (docs/radio-model.md).
    ///
    /// - `ideal`: `RadioParameters()`, the simulator's original model.
    /// - `indoor`: fitted by `tools/radio-fit/fit.py` to the Kolakowski calibration run (a furnished
    ///   flat, six receivers, LiDAR ground truth; `tools/radio-fit/indoor.json`): path-loss
    ///   exponent 1.99; residual sd 6.7 dB split into shadowing 5.35 dB (64 % of the variance,
    ///   correlation distance 3.5 m moved, correlation time 66 s standing) and fast fading 2.82 dB
    ///   Gaussian plus deep fades (30 % of readings, mean 4 dB); receiver offsets sd 1.95 dB; a
    ///   reading in 92 % of 1/3-s slots up to about 8 m, falling to half at 14 m. The per-device
    ///   spread of measured power (2 dB) is not fitted (the dataset has one tag).
    /// - `harsh`: a crowded venue, chosen rather than fitted: stronger and faster-changing
    ///   shadowing (7.5 dB, 2 m, 20 s), more and deeper fades, larger receiver and device spreads,
    ///   and reception 75 % near a receiver, half at 12 m.
    public init(profile: RadioProfile) {
        var p = RadioParameters()
        switch profile {
        case .ideal:
            break
        case .indoor:
            p.profile = .indoor
            p.pathLossExponent = 1.99
            p.measuredPowerSpreadDB = 2
            p.gatewayOffsetSpreadDB = 1.95
            p.shadowingSigmaDB = 5.35
            p.shadowingCorrelationS = 66
            p.shadowingCorrelationM = 3.5
            p.packetJitterDB = 2.82
            p.deepFadeProbability = 0.3
            p.deepFadeMeanDB = 4
            p.packetLoss = 0
            p.receptionP0 = 0.92
            p.receptionD50M = 14
            p.receptionWidthM = 2
        case .harsh:
            p.profile = .harsh
            p.pathLossExponent = 2.2
            p.measuredPowerSpreadDB = 3
            p.gatewayOffsetSpreadDB = 3
            p.shadowingSigmaDB = 7.5
            p.shadowingCorrelationS = 20
            p.shadowingCorrelationM = 2
            p.packetJitterDB = 3.5
            p.deepFadeProbability = 0.4
            p.deepFadeMeanDB = 6
            p.packetLoss = 0
            p.receptionP0 = 0.75
            p.receptionD50M = 12
            p.receptionWidthM = 2
        }
        self = p
    }
}
