public import WaymarkCore

extension RadioParameters {
    /// The physics of a radio profile (docs/radio-model.md).
    ///
    /// - `ideal`: `RadioParameters()`, the simulator's original model.
    /// - `indoor`: fitted by `tools/radio-fit/fit.py` to the Kolakowski calibration run (a furnished
    ///   flat, six receivers, LiDAR ground truth; `tools/radio-fit/indoor.json`): path-loss
    ///   exponent 1.12 plus a wall loss of 7.0 dB to gateways outside the device's room; residual
    ///   sd 6.4 dB split into shadowing 5.1 dB (64 % of the variance, correlation distance 2.3 m
    ///   moved, correlation time 200 s standing) and fast fading 2.56 dB Gaussian plus deep fades
    ///   (30 % of readings, mean 4 dB); receiver offsets sd 1.7 dB; a reading in 92 % of 1/3-s
    ///   slots up to about 8 m, falling to half at 14 m; antennas 1 m above the tags (the anchors'
    ///   mean height 2.3 m, the tag 1.3 m). The per-device
    ///   spread of measured power (2 dB) is not fitted (the dataset has one tag).
    /// - `harsh`: a crowded venue, chosen rather than fitted: the indoor path loss and walls with
    ///   stronger and faster-changing shadowing (7.5 dB, 1.5 m, 20 s: people moving between tag and
    ///   receiver), more and deeper fades, larger receiver and device spreads, and reception 75 %
    ///   near a receiver, half at 12 m.
    public init(profile: RadioProfile) {
        var p = RadioParameters()
        switch profile {
        case .ideal:
            break
        case .indoor:
            p.profile = .indoor
            p.pathLossExponent = 1.12
            p.wallLossDB = 7.0
            p.measuredPowerSpreadDB = 2
            p.gatewayOffsetSpreadDB = 1.7
            p.shadowingSigmaDB = 5.1
            p.shadowingCorrelationS = 200
            p.shadowingCorrelationM = 2.3
            p.packetJitterDB = 2.56
            p.deepFadeProbability = 0.3
            p.deepFadeMeanDB = 4
            p.packetLoss = 0
            p.receptionP0 = 0.92
            p.receptionD50M = 14
            p.receptionWidthM = 2
            p.antennaHeightM = 1.0
        case .harsh:
            p.profile = .harsh
            p.pathLossExponent = 1.12
            p.wallLossDB = 7.0
            p.measuredPowerSpreadDB = 3
            p.gatewayOffsetSpreadDB = 3
            p.shadowingSigmaDB = 7.5
            p.shadowingCorrelationS = 20
            p.shadowingCorrelationM = 1.5
            p.packetJitterDB = 3.5
            p.deepFadeProbability = 0.4
            p.deepFadeMeanDB = 6
            p.packetLoss = 0
            p.receptionP0 = 0.75
            p.receptionD50M = 12
            p.receptionWidthM = 2
            p.antennaHeightM = 1.0
        }
        self = p
    }

    /// The profile's physics for `site`: without walls (`simulation: { walls: false }`) no
    /// gateway is behind a wall.
    public init(profile: RadioProfile, site: Site) {
        self.init(profile: profile)
        if !site.simulation.walls { wallLossDB = 0 }
    }
}
