#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How likely one second of readings is, if the device were in a given region (the tracker's
/// likelihood, docs/fusion.md "Evidence").
///
/// The expected RSSI of gateway g for a device in region k is the log-distance model with a room
/// term, `P + n·L(k,g) − W·[g outside k's room] + offset(g)`, where `L(k,g) = −10·log10(d)` and
/// `d` is the typical distance from a point of the region to the gateway (centre distance, floor
/// height, antenna height and the region's spread, radius/√2, combined in quadrature). `P` (the
/// device's measured power) is not trusted: each hypothesis gets its own common offset `b`, the
/// readings' mean deviation shrunk towards 0 by a Gaussian prior (`deviceSpreadDB`), so that what
/// decides is the *pattern* across gateways, not the level. Deviations are scored with a Student-t
/// density (heavy tails: one reading 20 dB off costs a bounded amount, it cannot flip the answer).
/// A gateway of the monitored set that is online, expected loud, and silent while others heard the
/// device is evidence too, by the reception model the venue's data teach (`ReceptionCalibration`,
/// which starts from the detection curve below). The sum is multiplied by `evidenceWeight`, because
/// consecutive seconds are not independent (shadowing decorrelates over metres walked).
///
/// All numbers here are physics chosen from the literature and the radio fit (docs/radio-model.md),
/// not tuned on the accuracy suite's data.
struct EvidenceModel: Sendable {
    /// Scale of one gateway's 1-s mean RSSI around the model (dB): indoor shadowing of 4–8 dB is
    /// typical; the fitted radio's total residual is 6.4 dB.
    static let sigmaDB: Float = 6
    /// Student-t degrees of freedom: heavy tails (ν = 4 has finite variance, tails like a power law).
    static let nu: Float = 4
    /// Prior spread of a device's measured power around the calibrated venue level (dB): tags of
    /// one model differ by 1–3 dB, different models by more, a body or bag in the way by more still.
    static let deviceSpreadDB: Float = 6
    /// Share of a second's evidence counted as independent. Shadowing (about 64 % of the residual
    /// variance in the fitted radio) decorrelates over ~2.3 m walked, fading is independent: at
    /// walking pace the lag-1 correlation of 1-s residuals is about 0.42, and an AR(1) sequence
    /// with correlation ρ carries (1 − ρ)/(1 + ρ) ≈ 0.4 of the information of independent samples.
    static let evidenceWeight: Float = 0.4
    /// The detection curve before the venue's data say otherwise (`ReceptionCalibration`'s prior):
    /// the best chance that a gateway near the device reports it in a second in which others did
    /// (scan gaps, channel hopping, interference and collisions keep it below 1) …
    static let maxDetection: Float = 0.9
    /// … and the RSSI at which a gateway reports half the devices it could (dBm), and the width of
    /// that edge. One miss per second, however many adverts the others heard: the adverts of one
    /// second share its interference and scan gaps, and counting them separately made every other
    /// gateway's silence decisive (more flaps in the accuracy suite's museum).
    static let detectionMidDBm: Float = -92
    static let detectionWidthDB: Float = 4
    /// Height of the gateways' antennas above the tags (m) and of one storey (m).
    static let antennaHeightM = 1.0
    static let floorHeightM = 4.0

    /// −(ν+1)/2 · log(1 + x²/(ν σ²)) for |x| in steps of 1/`step` dB.
    let studentT: [Float]
    static let step: Float = 4
    /// Lowest expected RSSI the reception model's tables cover (dBm).
    static let missFloor: Float = -130

    init() {
        let s2 = Self.sigmaDB * Self.sigmaDB, nu = Self.nu
        studentT = (0...(64 * Int(Self.step))).map { i in
            let x = Float(i) / Self.step
            return -(nu + 1) / 2 * log1pf(x * x / (nu * s2))
        }
    }

    /// The Student-t log density of a deviation of `x` dB, up to a constant.
    @inline(__always)
    func logDensity(_ x: Float) -> Float {
        let i = Int(min(abs(x) * Self.step, Float(studentT.count - 1)))
        return studentT[i]
    }

    /// The prior on a hypothesis' common offset `b`, given how uncertain the venue's level still
    /// is (`VenueCalibration.levelVariance`, dB²): its variance is the device spread's plus that.
    /// Returned as the shrinkage denominator's prior term σ² / σ_b² and the penalty's 1 / (2 σ_b²).
    @inline(__always)
    static func levelPrior(venueLevelVariance v: Float) -> (count: Float, scale: Float) {
        let variance = deviceSpreadDB * deviceSpreadDB + v
        return (sigmaDB * sigmaDB / variance, 1 / (2 * variance))
    }
}
