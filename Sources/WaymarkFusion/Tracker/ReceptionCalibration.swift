#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How often each gateway reports a device in a second in which another gateway did, as a function
/// of the reading the model expects there — learned from the venue's own data (part of the
/// self-calibration, docs/fusion.md "Absence, learned").
///
/// The tracker counts a monitored gateway's silence as evidence against the regions where that
/// gateway should have heard the device. How much a silence says depends on the installation: a
/// gateway that scans continuously and a tag that advertises ten times a second make a miss rare
/// and telling; a scanner that shares its radio with Wi-Fi, a tag that advertises every two seconds
/// or a busy 2.4 GHz band make misses common and nearly meaningless. A fixed curve that is right for
/// one makes the other's true region look impossible whenever its own gateway misses a second.
///
/// The chance is modelled as `reliability(g) · sensitivity(μ)`: a venue-wide **sensitivity**
/// curve over the expected RSSI μ (how reception falls off towards the receivers' noise floor;
/// 1 for strong signals), in bins `binDB` wide from `lowDBm`, times a per-gateway **reliability**
/// (the share of a device's seconds a gateway reports when the signal is strong: its scan duty
/// cycle, its radio, its place), pooled towards the venue's (a gateway differs from the others only
/// on `poolOpportunities` of evidence). Both are estimated from opportunities: in every second whose
/// region the tracker was sure of beforehand, each online gateway of the device's monitored set is
/// one opportunity at the RSSI the model expects there, reported or not (a reporting gateway counts
/// only when another gateway reported too, as a silent one always does: the likelihood weighs
/// silences only in seconds with evidence). The two factors are fitted by a few rounds of
/// alternating weighted means from the priors, each prior worth `priorOpportunities` observations
/// (`EvidenceModel`'s detection curve: `maxDetection` times a logistic); the sensitivity is kept
/// non-decreasing in μ (a louder link is not reported less often: pool-adjacent-violators) and at
/// most 1, and the product within `minRate…maxRate`, so that no silence can cost more than a
/// bounded amount. Counts decay over `memory` opportunities per gateway and bin, so the model
/// follows a venue that changes (a new scanner setting, a gateway whose radio degrades).
struct ReceptionCalibration: Hashable, Sendable {
    static let lowDBm: Float = -110
    static let binDB: Float = 4
    static let binCount = 20
    /// Observations each prior is worth (per bin for the sensitivity, per gateway for reliability).
    static let priorOpportunities = 30.0
    /// Opportunities a gateway's own reliability must outweigh to differ from the venue's.
    static let poolOpportunities = 500.0
    /// Opportunities per gateway and bin the counts average over once full.
    static let memory = 2_000.0
    static let minRate: Float = 0.02, maxRate: Float = 0.95
    /// The table the likelihood reads: log(1 − rate) per gateway, from `EvidenceModel.missFloor`
    /// in steps of 1/`tableStep` dB over `tableSpanDB`.
    static let tableStep: Float = 1
    static let tableSpanDB: Float = 120
    static let tableSize = Int(tableSpanDB * tableStep) + 1

    let gatewayCount: Int
    /// Opportunities learned from since the start (not decayed).
    var learned: Double = 0
    /// Decayed counts per gateway and bin (gateway-major): reported, and opportunities.
    var reported: [Double]
    var opportunities: [Double]
    /// The factors in use (recomputed by `refresh`).
    var sensitivity: [Float]
    var reliability: [Float]
    /// log(1 − reliability(g) · sensitivity(μ)) per gateway (gateway-major, `tableSize` each),
    /// linear in the rate between bin centres: what the likelihood reads.
    private(set) var missTable: [Float]

    init(gatewayCount: Int) {
        self.gatewayCount = gatewayCount
        reported = Array(repeating: 0, count: gatewayCount * Self.binCount)
        opportunities = reported
        sensitivity = (0..<Self.binCount).map { Self.priorSensitivity(Self.centre(of: $0)) }
        reliability = Array(repeating: Self.priorReliability, count: gatewayCount)
        missTable = []
        missTable = Self.tables(sensitivity: sensitivity, reliability: reliability)
    }

    /// The default curves (before any data): `EvidenceModel`'s logistic detection probability,
    /// as a reliability of `maxDetection` times a sensitivity that reaches 1.
    static let priorReliability = EvidenceModel.maxDetection
    static func priorSensitivity(_ mu: Float) -> Float {
        1 / (1 + expf(-(mu - EvidenceModel.detectionMidDBm) / EvidenceModel.detectionWidthDB))
    }

    static func centre(of bin: Int) -> Float { lowDBm + (Float(bin) + 0.5) * binDB }

    static func bin(of mu: Float) -> Int {
        min(max(Int(((mu - lowDBm) / binDB).rounded(.down)), 0), binCount - 1)
    }

    /// One opportunity: gateway `g`, where the model expected `expected` dBm, did (or did not)
    /// report the device in a second in which another gateway did.
    mutating func learn(gateway g: Int, expected: Float, reported wasReported: Bool) {
        guard g >= 0, g < gatewayCount else { return }
        learned += 1
        let i = g * Self.binCount + Self.bin(of: expected)
        let decay = opportunities[i] >= Self.memory ? 1 - 1 / Self.memory : 1
        reported[i] = reported[i] * decay + (wasReported ? 1 : 0)
        opportunities[i] = opportunities[i] * decay + 1
    }

    /// Whether the model has seen on average `wellFed` opportunities per gateway: from then on the
    /// engine teaches it from a sample of the seconds (`DeviceState.closeSecond`).
    var isWellFed: Bool { learned >= Self.wellFed * Double(gatewayCount) }
    static let wellFed = 500.0
    /// Rounds of the alternating fit (from the priors; it settles within a few).
    static let fitRounds = 4

    /// Re-fits the two factors from the counts and rebuilds the tables. The result is a function
    /// of the counts alone — the fit starts from the priors every time, and the tables follow every
    /// change — so that how often the engine refreshes cannot change what it computes (a restart,
    /// or the aggregator against `waymark replay`).
    mutating func refresh() {
        let B = Self.binCount, G = gatewayCount, a = Self.priorOpportunities
        var s = (0..<B).map { Double(Self.priorSensitivity(Self.centre(of: $0))) }
        var rho = [Double](repeating: Double(Self.priorReliability), count: G)
        var weights = [Double](repeating: 0, count: B)
        for _ in 0..<Self.fitRounds {
            for b in 0..<B {
                var rep = 0.0, expected = 0.0
                for g in 0..<G {
                    rep += reported[g * B + b]
                    expected += opportunities[g * B + b] * rho[g]
                }
                weights[b] = expected + a
                s[b] = (rep + a * Double(Self.priorSensitivity(Self.centre(of: b)))) / weights[b]
            }
            s = Self.nonDecreasing(s, weights: weights).map { min($0, 1) }
            // Each gateway's reliability is pooled towards the venue's (partial pooling, worth
            // `poolOpportunities`), which is pooled towards the prior: a gateway stands out only
            // on a lot of evidence, as a gateway with a failing radio soon has.
            var reps = [Double](repeating: 0, count: G), exps = [Double](repeating: 0, count: G)
            var venueRep = 0.0, venueExp = 0.0
            for g in 0..<G {
                for b in 0..<B {
                    reps[g] += reported[g * B + b]
                    exps[g] += opportunities[g * B + b] * s[b]
                }
                venueRep += reps[g]
                venueExp += exps[g]
            }
            let venue = min(1, (venueRep + a * Double(Self.priorReliability)) / (venueExp + a))
            for g in 0..<G {
                rho[g] = min(1, (reps[g] + Self.poolOpportunities * venue) / (exps[g] + Self.poolOpportunities))
            }
        }
        let nextS = s.map(Float.init), nextRho = rho.map(Float.init)
        guard nextS != sensitivity || nextRho != reliability else { return }
        sensitivity = nextS
        reliability = nextRho
        missTable = Self.tables(sensitivity: sensitivity, reliability: reliability)
    }

    /// Weighted pool-adjacent-violators: the non-decreasing sequence closest to `values` in
    /// weighted least squares.
    static func nonDecreasing(_ values: [Double], weights: [Double]) -> [Double] {
        var blocks: [(value: Double, weight: Double, count: Int)] = []
        for (v, w) in zip(values, weights) {
            blocks.append((v, w, 1))
            while blocks.count >= 2, blocks[blocks.count - 2].value > blocks[blocks.count - 1].value {
                let b = blocks.removeLast(), a = blocks.removeLast()
                let weight = a.weight + b.weight
                blocks.append(((a.value * a.weight + b.value * b.weight) / weight, weight, a.count + b.count))
            }
        }
        return blocks.flatMap { Array(repeating: $0.value, count: $0.count) }
    }

    /// The sensitivity at `mu`, linear between bin centres.
    static func interpolate(_ sensitivity: [Float], at mu: Float) -> Float {
        let x = (mu - lowDBm) / binDB - 0.5
        let lo = min(max(Int(x.rounded(.down)), 0), binCount - 1), hi = min(lo + 1, binCount - 1)
        let f = min(max(x - Float(lo), 0), 1)
        return sensitivity[lo] + (sensitivity[hi] - sensitivity[lo]) * f
    }

    /// `missTable` for these factors. Rebuilt on nearly every engine tick (some count changed),
    /// so each logarithm is taken once per distinct argument: a row's arguments repeat beyond the
    /// curve's first and last bins and wherever the rate is clamped, and gateways whose
    /// reliability is the same share a row. The values are those of taking every one.
    static func tables(sensitivity: [Float], reliability: [Float]) -> [Float] {
        let curve = (0..<tableSize).map { i in interpolate(sensitivity, at: EvidenceModel.missFloor + Float(i) / tableStep) }
        var out = [Float](repeating: 0, count: reliability.count * tableSize)
        out.withUnsafeMutableBufferPointer { out in
            for (g, r) in reliability.enumerated() {
                let row = g * tableSize
                if g > 0, reliability[g - 1] == r {
                    for i in 0..<tableSize { out[row + i] = out[row - tableSize + i] }
                    continue
                }
                var argument = Float.nan, value: Float = 0
                for i in 0..<tableSize {
                    let a = -min(max(r * curve[i], minRate), maxRate)
                    if a != argument { argument = a; value = log1pf(a) }
                    out[row + i] = value
                }
            }
        }
        return out
    }

    /// The chance that gateway `g` reports a device where the model expects `mu` (as the
    /// likelihood reads it).
    func rate(gateway g: Int, at mu: Float) -> Float {
        let i = Int(max(0, min((mu - EvidenceModel.missFloor) * Self.tableStep, Float(Self.tableSize - 1))))
        return -expm1f(missTable[g * Self.tableSize + i])
    }

    /// Opportunities behind the estimate (decayed), in all and per gateway.
    var totalOpportunities: Double { opportunities.reduce(0, +) }
    func opportunities(gateway g: Int) -> Double {
        opportunities[(g * Self.binCount)..<((g + 1) * Self.binCount)].reduce(0, +)
    }
}

extension ReceptionCalibration: Codable {
    private enum CodingKeys: String, CodingKey { case gateways, learned, reported, opportunities, sensitivity, reliability }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let gateways = try c.decode(Int.self, forKey: .gateways)
        self.init(gatewayCount: gateways)
        let reported = try c.decode([Double].self, forKey: .reported)
        let opportunities = try c.decode([Double].self, forKey: .opportunities)
        let sensitivity = try c.decode([Float].self, forKey: .sensitivity)
        let reliability = try c.decode([Float].self, forKey: .reliability)
        // A checkpoint of another layout starts over rather than misreading it.
        let cells = gateways * Self.binCount
        guard reported.count == cells, opportunities.count == cells, sensitivity.count == Self.binCount,
              reliability.count == gateways else { return }
        learned = try c.decode(Double.self, forKey: .learned)
        self.reported = reported
        self.opportunities = opportunities
        self.sensitivity = sensitivity
        self.reliability = reliability
        missTable = Self.tables(sensitivity: sensitivity, reliability: reliability)
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(gatewayCount, forKey: .gateways)
        try c.encode(learned, forKey: .learned)
        try c.encode(reported, forKey: .reported)
        try c.encode(opportunities, forKey: .opportunities)
        try c.encode(sensitivity, forKey: .sensitivity)
        try c.encode(reliability, forKey: .reliability)
    }

    /// The same model for another gateway list: gateway `i` of this one is gateway `map[i]` of
    /// the result (nil: gone). New gateways start from the priors.
    func remapped(to gatewayCount: Int, _ map: [Int?]) -> ReceptionCalibration {
        var r = ReceptionCalibration(gatewayCount: gatewayCount)
        r.sensitivity = sensitivity
        r.learned = learned
        for (i, target) in map.enumerated() {
            guard let g = target, g < gatewayCount, i < self.gatewayCount else { continue }
            r.reliability[g] = reliability[i]
            for b in 0..<Self.binCount {
                r.reported[g * Self.binCount + b] = reported[i * Self.binCount + b]
                r.opportunities[g * Self.binCount + b] = opportunities[i * Self.binCount + b]
            }
        }
        r.missTable = Self.tables(sensitivity: r.sensitivity, reliability: r.reliability)
        return r
    }
}
