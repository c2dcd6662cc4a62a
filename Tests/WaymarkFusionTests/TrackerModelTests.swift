import Foundation
import Testing
import WaymarkCore
@testable import WaymarkFusion

/// The tracker's model pieces against hand-computed values, and its probabilities' invariants.
@Suite struct TrackerModelTests {
    @Test func studentTDensityMatchesTheFormula() {
        let m = EvidenceModel()
        #expect(m.logDensity(0) == 0)
        // −(ν+1)/2 · log(1 + x²/(ν σ²)) with ν = 4, σ = 6: at 6 dB −2.5·log(1.25).
        let expected = Float(-2.5 * Foundation.log(1.25))
        #expect(abs(m.logDensity(6) - expected) < 1e-4)
        #expect(m.logDensity(-6) == m.logDensity(6))
        // Heavy tails: 40 dB off costs a few nats, not hundreds (a Gaussian would cost 22).
        #expect(m.logDensity(40) > -7)
    }

    @Test func absenceCostsMoreWhereTheGatewayShouldHaveHeardAndIsBounded() {
        // The reception model before any data: EvidenceModel's detection curve.
        let r = ReceptionCalibration(gatewayCount: 1)
        func missLog(_ mu: Float) -> Float { Float(Foundation.log(1 - Double(r.rate(gateway: 0, at: mu)))) }
        #expect(missLog(-60) < missLog(-90))
        let p: Double = 0.9 / (1 + Foundation.exp(-32.0 / 4.0))
        #expect(abs(missLog(-60) - Float(Foundation.log(1 - p))) < 0.02)
        #expect(missLog(-120) > -0.03)
        // Bounded: a gateway right next to the device may still miss a second.
        #expect(missLog(-40) >= Float(Foundation.log(1 - Double(EvidenceModel.maxDetection))) - 1e-4)
    }

    @Test func transitionRowsAreDistributionsAndReachGrowsWithTheGap() throws {
        let site = try Venue.line(5, spacing: 10)
        let ctx = FusionContext(site: site)
        let topo = ctx.tracker.topology[0]
        let m = ctx.monitoredSets[0].count
        for gap in [1.0, 5, 30, 500] {
            let t = ctx.tracker.motion.matrix(gap: gap, traversal: topo.traversal, adjacent: topo.adjacent, degree: topo.degree, m: m)
            for i in 0..<m {
                let row = t[(i * m)..<((i + 1) * m)]
                #expect(abs(row.reduce(0, +) - 1) < 1e-5)
                #expect(row.allSatisfy { $0 >= 0 })
            }
        }
        // From r0 (set order r0, r1, r2, …): two regions on (through 10 m of r1) is implausible after
        // a second and plausible after twenty.
        let one = ctx.tracker.motion.matrix(gap: 1, traversal: topo.traversal, adjacent: topo.adjacent, degree: topo.degree, m: m)
        let twenty = ctx.tracker.motion.matrix(gap: 20, traversal: topo.traversal, adjacent: topo.adjacent, degree: topo.degree, m: m)
        #expect(one[2] < 0.01 * one[1])
        #expect(twenty[2] > 0.2 * twenty[1])
        #expect(topo.traversal[2] == 10)
    }

    /// The oldest pending second smoothed the plain way: β ← T·(β ∘ likelihood), each element a
    /// row-by-row dot product, renormalised at every step.
    static func smoothedOldest(_ t: RegionTracker, transition: [Float]) -> [Float] {
        let m = t.alpha.count, n = t.pendingCount
        if t.settledRegion() != nil { return Array(t.pendingAlpha[0..<m]) }
        var beta = [Float](repeating: 1, count: m)
        for p in stride(from: n - 1, through: 1, by: -1) {
            for j in 0..<m { beta[j] *= t.pendingLikelihood(p, j) }
            var next = [Float](repeating: 0, count: m), total: Float = 0
            for i in 0..<m {
                var s: Float = 0
                for j in 0..<m { s += transition[i * m + j] * beta[j] }
                next[i] = s
                total += s
            }
            if total > 0 && total.isFinite { beta = next.map { $0 * (1 / total) } }
        }
        return RegionTracker.normalised((0..<m).map { t.pendingAlpha[$0] * beta[$0] })
    }

    /// A random row-stochastic m × m transition matrix (row-major), every entry above 0.
    static func randomTransition(m: Int, using rng: inout SeededRandom) -> [Float] {
        var transition = [Float](repeating: 0, count: m * m)
        for i in 0..<m {
            let row = (0..<m).map { _ in Float.random(in: 0.01...1, using: &rng) }
            let s = row.reduce(0, +)
            for j in 0..<m { transition[i * m + j] = row[j] / s }
        }
        return transition
    }

    @Test func filterAndSmootherKeepProbabilitiesNormalised() {
        var rng = SeededRandom(seed: 9)
        // Sizes through every block of `RegionTracker.weightedRowSum` (20, 8, 4 and 1 columns).
        for m in [1, 2, 5, 13, 20, 29, 45] {
            var t = RegionTracker()
            t.reset(states: m, on: nil)
            let transition = Self.randomTransition(m: m, using: &rng)
            for second in 0..<200 {
                t.add(gateway: 0, rssi: -70, weight: 1, power: -59, at: Double(second))
                // Likelihoods spanning many orders of magnitude, some exactly 0.
                let lik: [Float] = (0..<m).map { _ in
                    Float.random(in: 0..<1, using: &rng) < 0.1 ? 0 : Foundation.exp(Float.random(in: -40...0, using: &rng))
                }
                t.close(likelihood: lik, transition: second == 0 ? nil : transition)
                #expect(abs(t.alpha.reduce(0, +) - 1) < 1e-4)
                #expect(t.alpha.allSatisfy { $0 >= 0 && $0.isFinite })
                while t.pendingCount > 3 {
                    let reference = Self.smoothedOldest(t, transition: transition)
                    let (_, post) = t.finalizeOldest { _ in SetTopology.transposed(transition, m: m) }
                    #expect(post == reference, "the column-wise backward pass must give the row-wise one's result bit for bit")
                    #expect(abs(post.reduce(0, +) - 1) < 1e-4)
                    #expect(post.allSatisfy { $0 >= 0 && $0.isFinite })
                }
            }
        }
    }

    /// The filter step the plain way (a copy of the prediction times the likelihood, normalised
    /// with `reduce` and `map`; the likelihood alone when that sums to 0), as the tracker did it
    /// before it worked in `alpha`'s storage.
    static func filtered(prior: [Float], likelihood: [Float]) -> [Float] {
        var a = prior
        for j in 0..<a.count { a[j] *= likelihood[j] }
        let sum = a.reduce(0, +)
        return sum > 0 && sum.isFinite ? a.map { $0 / sum } : RegionTracker.normalised(likelihood)
    }

    /// The prediction the plain way: Σ_i alpha[i]·T[i][j], rows in order, into a fresh array.
    static func predicted(alpha: [Float], transition: [Float]) -> [Float] {
        let m = alpha.count
        var a = [Float](repeating: 0, count: m)
        for i in 0..<m where alpha[i] > 0 {
            for j in 0..<m { a[j] += alpha[i] * transition[i * m + j] }
        }
        return a
    }

    @Test func inPlaceFilterStepAndPredictionMatchThePlainOnesBitForBit() {
        var rng = SeededRandom(seed: 11)
        for m in [1, 3, 12, 20, 24, 47] {
            var t = RegionTracker()
            t.reset(states: m, on: nil)
            let transition = Self.randomTransition(m: m, using: &rng)
            for second in 0..<300 {
                t.add(gateway: 0, rssi: -70, weight: 1, power: -59, at: Double(second))
                // Some seconds contradict every state (all 0) or underflow, to cover the fallback.
                let lik: [Float] = (0..<m).map { _ in
                    second % 50 == 7 ? 0 : Float.random(in: 0..<1, using: &rng) < 0.1 ? 0 : Foundation.exp(Float.random(in: -40...0, using: &rng))
                }
                let prior = second == 0 ? t.alpha : Self.predicted(alpha: t.alpha, transition: transition)
                #expect(second == 0 || t.predict(transition: transition) == prior)
                let expected = Self.filtered(prior: prior, likelihood: lik)
                prior.withUnsafeBufferPointer { p in lik.withUnsafeBufferPointer { l in t.close(likelihood: l, prior: p) } }
                #expect(t.alpha == expected)
                #expect(Array(t.pendingAlpha.suffix(m)) == expected && Array(t.costs.suffix(m)) == lik.map(RegionTracker.cost))
                while t.pendingCount > 3 {
                    let settled = t.settledRegion() != nil, oldest = Array(t.pendingAlpha[0..<m])
                    let (_, post) = t.finalizeOldest { _ in SetTopology.transposed(transition, m: m) }
                    #expect(!settled || post == oldest, "a settled second is recorded as filtered")
                }
            }
        }
    }

    /// Closes one second (whole second `second`) with `likelihood` and finalises what the lag
    /// leaves due, keeping `keep` finalised seconds.
    static func step(_ t: inout RegionTracker, second: Int, likelihood: [Float], lag: Int = 2, keep: Int = 6) {
        t.add(gateway: 0, rssi: -70, weight: 1, power: -59, at: Double(second) + 0.25)
        let m = likelihood.count
        let stay: [Float] = (0..<(m * m)).map { $0 / m == $0 % m ? 0.9 : 0.1 / Float(m - 1) }
        t.close(likelihood: likelihood, transition: t.lastSecond == .min ? nil : stay)
        while t.pendingCount > lag { _ = t.finalizeOldest(keepingPast: keep) { _ in SetTopology.transposed(stay, m: m) } }
    }

    @Test func aMoveIsDatedAtTheMaximumLikelihoodChangePoint() {
        var t = RegionTracker()
        t.reset(states: 3, on: 0)
        // Seconds 0–4 favour state 0, 5–7 state 1 a little, 8 on state 1 clearly.
        for s in 0..<5 { Self.step(&t, second: s, likelihood: [1, 0.2, 0.1]) }
        for s in 5..<8 { Self.step(&t, second: s, likelihood: [0.6, 1, 0.1]) }
        for s in 8..<12 { Self.step(&t, second: s, likelihood: [0.05, 1, 0.1]) }
        #expect(t.heldSeconds == [4, 5, 6, 7, 8, 9], "the last `keep` finalised seconds are held")
        // State 1 first led in second 8 (say): the evidence turned at 5.
        #expect(t.changePoint(from: 0, to: 1, firstLed: 8, lookBack: 3, after: 0) == 5)
        // Not further back than `lookBack` seconds, nor into the visit that began at 6.5.
        #expect(t.changePoint(from: 0, to: 1, firstLed: 8, lookBack: 2, after: 0) == 6)
        #expect(t.changePoint(from: 0, to: 1, firstLed: 8, lookBack: 3, after: 6.5) == 7)
        // Evidence that favoured the old state all along leaves the date where the new one led.
        #expect(t.changePoint(from: 1, to: 0, firstLed: 8, lookBack: 3, after: 0) == 8)
        // A rotation of the set keeps the held seconds with their states: state 1 is now index 0,
        // old state 0 index 2, and a new region (index 1) is the least likely in every second.
        t.remap([1, nil, 0])
        #expect(t.changePoint(from: 2, to: 0, firstLed: 8, lookBack: 3, after: 0) == 5)
        #expect(t.changePoint(from: 2, to: 1, firstLed: 8, lookBack: 3, after: 0) == 8)
        #expect(t.isConsistent)
        t.reset(states: 3, on: 0)
        #expect(t.times.isEmpty && t.costs.isEmpty && t.held == 0 && t.isConsistent)
        // A damaged state is recognised (a restored checkpoint then starts the tracker over).
        for damage in 0..<3 {
            var d = RegionTracker()
            d.reset(states: 3, on: 0)
            for s in 0..<6 { Self.step(&d, second: s, likelihood: [1, 0.5, 0.1]) }
            #expect(d.isConsistent)
            switch damage {
            case 0: d.costs.removeLast()
            case 1: d.held = d.times.count + 1
            default: d.pendingAlpha.append(0.5)
            }
            #expect(!d.isConsistent, "damage \(damage)")
        }
    }

    @Test func aSecondsCostIsItsLogLikelihoodInSixteenthsOfANatAndReadsBack() {
        var l: Float = 1
        while l > 1e-9 {
            let exact = min(255, (-Foundation.log(Double(l)) * Double(RegionTracker.costScale)).rounded())
            let cost = RegionTracker.cost(l)
            #expect(abs(Double(cost) - exact) <= 1, "likelihood \(l)")
            // What the backward pass reads back is within half a unit (1/32 nat) of the likelihood.
            if cost < 255 { #expect(abs(Foundation.log(RegionTracker.likelihoodOfCost[Int(cost)] / l)) <= 0.5 / RegionTracker.costScale + 1e-4) }
            l *= 0.83
        }
        #expect(RegionTracker.cost(1) == 0 && RegionTracker.cost(0) == 255 && RegionTracker.cost(1e-30) == 255)
        #expect(RegionTracker.likelihoodOfCost[0] == 1)
    }

    @Test func remapKeepsTheProbabilityOfRegionsThatStay() {
        var t = RegionTracker()
        t.reset(states: 3, on: nil)
        t.alpha = [0.7, 0.2, 0.1]
        // New set: old state 1, a new region, old state 0.
        t.remap([1, nil, 0])
        #expect(t.alpha.count == 3)
        #expect(abs(t.alpha.reduce(0, +) - 1) < 1e-6)
        #expect(t.alpha[2] > t.alpha[0] && t.alpha[0] > t.alpha[1])
    }

    @Test func calibrationFindsAHotGatewayAndTheVenueLevel() throws {
        // A device walking up and down a line of six regions for 20 minutes; g2 reads 8 dB hot and
        // every reading is 6 dB hotter than the tags' advertised −59 dBm would give.
        var d = Driver(try Venue.line(6, spacing: 8, radius: 3))
        var rng = SeededRandom(seed: 3)
        d.run(for: 1200, step: 0.5) { d in
            d.heartbeat()
            let t = d.now - 1000
            let phase = t.truncatingRemainder(dividingBy: 160)
            let x = phase < 80 ? phase * 0.5 : 40 - (phase - 80) * 0.5
            for g in 0..<6 {
                var v = rssi(atDistance: max(0.5, abs(Double(g) * 8 - x))) + 6 + rng.gaussian(sigma: 3)
                if g == 2 { v += 8 }
                d.hear("g\(g)", rssi: min(v, -1), tx: -59)
            }
        }
        let c = d.engine.calibration
        let g2 = d.site.gatewayIndex("g2")!
        #expect(c.gatewayOffsetDB[g2] > 5, "\(c.gatewayOffsetDB)")
        #expect(c.appliedCorrectionsDB[g2] < -2, "\(c.appliedCorrectionsDB)")
        for g in d.site.gateways.indices where g != g2 { #expect(abs(c.gatewayOffsetDB[g]) < 3.5, "\(c.gatewayOffsetDB)") }
        #expect(c.powerCorrectionDB > 3, "readings run hot: \(c.powerCorrectionDB)")
        #expect(c.updates > 500)
    }
}
