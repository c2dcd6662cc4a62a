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
                #expect(t[i * m + i] == 0, "where a device that leaves goes: never where it was")
            }
        }
        // A set of one: nowhere to go.
        #expect(ctx.tracker.motion.matrix(gap: 1, traversal: [0], adjacent: [false], degree: [1], m: 1) == [1])
        // From r0 (set order r0, r1, r2, …): two regions on (through 10 m of r1) is implausible after
        // a second and plausible after twenty.
        let one = ctx.tracker.motion.matrix(gap: 1, traversal: topo.traversal, adjacent: topo.adjacent, degree: topo.degree, m: m)
        let twenty = ctx.tracker.motion.matrix(gap: 20, traversal: topo.traversal, adjacent: topo.adjacent, degree: topo.degree, m: m)
        #expect(one[2] < 0.01 * one[1])
        #expect(twenty[2] > 0.2 * twenty[1])
        #expect(topo.traversal[2] == 10)
    }

    /// The tracker's model written out over 2m states (index i: passing in region i, m + i:
    /// staying in it), row = from: what `RegionTracker` computes with m-vectors and shares.
    static func expanded(moves: [Float], m: Int, gap: Float) -> [Double] {
        let r = MotionModel.Dwell.rates(gap: gap)
        var e = [Double](repeating: 0, count: 4 * m * m)
        let w = 2 * m
        for i in 0..<m {
            for j in 0..<m {
                e[i * w + j] += Double(r.leavePass) * Double(moves[i * m + j])
                e[(m + i) * w + j] += Double(r.leaveStay) * Double(moves[i * m + j])
            }
            e[i * w + i] += Double(r.keep)
            e[i * w + m + i] += Double(r.settle)
            e[(m + i) * w + m + i] += 1 - Double(r.leaveStay)
        }
        return e
    }

    /// One filter step of the written-out model (in doubles): prediction, likelihood, normalised
    /// (the likelihood alone, passing, when that sums to 0).
    static func filterStep(_ a: [Double], moves: [Float]?, m: Int, gap: Float, likelihood: [Float]) -> [Double] {
        var prior = a
        if let moves {
            let e = expanded(moves: moves, m: m, gap: gap)
            prior = (0..<(2 * m)).map { y in (0..<(2 * m)).reduce(0.0) { $0 + a[$1] * e[$1 * 2 * m + y] } }
        }
        var post = (0..<(2 * m)).map { prior[$0] * Double(likelihood[$0 % m]) }
        let sum = post.reduce(0, +)
        if sum > 0 && sum.isFinite { return post.map { $0 / sum } }
        let l = likelihood.map(Double.init), ls = l.reduce(0, +)
        post = (0..<(2 * m)).map { $0 < m ? (ls > 0 ? l[$0] / ls : 1 / Double(m)) : 0 }
        return post
    }

    /// The oldest of `filtered` (the written-out filter's vectors of the pending seconds) smoothed
    /// with the later seconds' likelihoods (`t.pendingLikelihood`, as the tracker stores them),
    /// each region's probability.
    static func smoothedOldest(_ t: RegionTracker, filtered: [[Double]], moves: [Float], m: Int) -> [Double] {
        let n = t.pendingCount
        var beta = [Double](repeating: 1, count: 2 * m)
        for p in stride(from: n - 1, through: 1, by: -1) {
            let e = expanded(moves: moves, m: m, gap: t.pendingGap(p))
            let g = (0..<(2 * m)).map { beta[$0] * Double(t.pendingLikelihood(p, $0 % m)) }
            beta = (0..<(2 * m)).map { x in (0..<(2 * m)).reduce(0.0) { $0 + e[x * 2 * m + $1] * g[$1] } }
            let total = beta.reduce(0, +)
            if total > 0 { beta = beta.map { $0 / total } }
        }
        let joint = (0..<(2 * m)).map { filtered[0][$0] * beta[$0] }
        let marginal = (0..<m).map { joint[$0] + joint[m + $0] }
        let s = marginal.reduce(0, +)
        return marginal.map { $0 / s }
    }

    /// A random destination matrix (row-major, m × m): where a device leaving each region goes,
    /// every other region above 0, never the region itself (a set of one: [1]).
    static func randomMoves(m: Int, using rng: inout SeededRandom) -> [Float] {
        guard m > 1 else { return [1] }
        var moves = [Float](repeating: 0, count: m * m)
        for i in 0..<m {
            let row = (0..<m).map { $0 == i ? 0 : Float.random(in: 0.01...1, using: &rng) }
            let s = row.reduce(0, +)
            for j in 0..<m { moves[i * m + j] = row[j] / s }
        }
        return moves
    }

    @Test func filterAndSmootherAreTheTwoPhaseModelWrittenOut() {
        var rng = SeededRandom(seed: 9)
        // Sizes through every block of `RegionTracker.weightedRowSum` (20, 8, 4 and 1 columns).
        for m in [1, 2, 5, 13, 20, 29, 45] {
            var t = RegionTracker()
            t.reset(states: m, on: nil)
            var reference = (0..<(2 * m)).map { $0 < m ? 1 / Double(m) : 0 }
            var pending: [[Double]] = []
            let moves = Self.randomMoves(m: m, using: &rng)
            var second = 0
            for step in 0..<200 {
                // Now and then a silence of a few seconds (another gap, other rates).
                second += step % 37 == 36 ? 5 : 1
                t.add(gateway: 0, rssi: -70, weight: 1, power: -59, at: Double(second))
                // Likelihoods spanning many orders of magnitude, some exactly 0.
                let lik: [Float] = (0..<m).map { _ in
                    Float.random(in: 0..<1, using: &rng) < 0.1 ? 0 : Foundation.exp(Float.random(in: -40...0, using: &rng))
                }
                let gap: Float = step == 0 ? 1 : Float(second - Int(t.lastSecond))
                t.close(likelihood: lik, moves: step == 0 ? nil : moves)
                reference = Self.filterStep(reference, moves: step == 0 ? nil : moves, m: m, gap: gap, likelihood: lik)
                pending.append(reference)
                #expect(abs(t.alpha.reduce(0, +) - 1) < 1e-4)
                #expect(t.alpha.allSatisfy { $0 >= 0 && $0.isFinite })
                // Each region's probability as written out; the staying shares are stored as bytes.
                for i in 0..<m { #expect(abs(Double(t.alpha[i]) - (reference[i] + reference[m + i])) < 5e-3) }
                while t.pendingCount > 3 {
                    let expected = Self.smoothedOldest(t, filtered: pending, moves: moves, m: m)
                    let (_, post) = t.finalizeOldest { _ in SetTopology.transposed(moves, m: m) }
                    pending.removeFirst()
                    #expect(abs(post.reduce(0, +) - 1) < 1e-4)
                    #expect(post.allSatisfy { $0 >= 0 && $0.isFinite })
                    for i in 0..<m { #expect(abs(Double(post[i]) - expected[i]) < 5e-3, "m \(m) region \(i)") }
                }
                // Keep the reference on the tracker's own shares (the bytes' rounding, not the
                // model, is what the two then differ by).
                reference = (0..<(2 * m)).map { x in
                    let i = x % m, share = Double(t.stayShare(i))
                    return Double(t.alpha[i]) * (x < m ? 1 - share : share)
                }
                pending[pending.count - 1] = reference
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

    /// The prediction the plain way, in the tracker's order of operations: what leaves each region
    /// (passing and staying parts, `MotionModel.Dwell`) spread over the destinations, rows in
    /// order, then what keeps and settles.
    static func predicted(_ t: RegionTracker, moves: [Float], gap: Float) -> [Float] {
        let m = t.alpha.count, r = MotionModel.Dwell.rates(gap: gap)
        let staying = (0..<m).map { t.alpha[$0] * t.stayShare($0) }
        let passing = (0..<m).map { t.alpha[$0] - staying[$0] }
        let leaving = (0..<m).map { passing[$0] * r.leavePass + staying[$0] * r.leaveStay }
        var a = [Float](repeating: 0, count: m)
        for i in 0..<m where leaving[i] > 0 {
            for j in 0..<m { a[j] += leaving[i] * moves[i * m + j] }
        }
        for j in 0..<m { a[j] += passing[j] * r.keep + (staying[j] * (1 - r.leaveStay) + passing[j] * r.settle) }
        return a
    }

    @Test func inPlaceFilterStepAndPredictionMatchThePlainOnesBitForBit() {
        var rng = SeededRandom(seed: 11)
        for m in [1, 3, 12, 20, 24, 47] {
            var t = RegionTracker()
            t.reset(states: m, on: nil)
            let moves = Self.randomMoves(m: m, using: &rng)
            for second in 0..<300 {
                t.add(gateway: 0, rssi: -70, weight: 1, power: -59, at: Double(second))
                // Some seconds contradict every state (all 0) or underflow, to cover the fallback.
                let lik: [Float] = (0..<m).map { _ in
                    second % 50 == 7 ? 0 : Float.random(in: 0..<1, using: &rng) < 0.1 ? 0 : Foundation.exp(Float.random(in: -40...0, using: &rng))
                }
                let (prior, stay) = t.predict(moves: second == 0 ? nil : moves, gap: 1)
                #expect(second == 0 || prior == Self.predicted(t, moves: moves, gap: 1))
                let expected = Self.filtered(prior: prior, likelihood: lik)
                t.close(likelihood: lik, prior: prior, stay: stay)
                #expect(t.alpha == expected)
                #expect(Array(t.pendingAlpha.suffix(m)) == expected && Array(t.costs.suffix(m)) == lik.map(RegionTracker.cost))
                while t.pendingCount > 3 {
                    let settled = t.settledRegion() != nil, oldest = Array(t.pendingAlpha[0..<m])
                    let (_, post) = t.finalizeOldest { _ in SetTopology.transposed(moves, m: m) }
                    #expect(!settled || post == oldest, "a settled second is recorded as filtered")
                }
                #expect(t.isConsistent)
            }
        }
    }

    @Test func aDeviceThatHasStayedAWhileNeedsMoreEvidenceToLeaveThanOneJustArrived() {
        // Two regions; one device has been in region 0 for two minutes, the other for two seconds.
        // The same contrary evidence (region 1 four times as likely, each second): the newcomer's
        // filter moves first.
        let moves: [Float] = [0, 1, 1, 0]
        func settled(for seconds: Int) -> RegionTracker {
            var t = RegionTracker()
            t.reset(states: 2, on: 0)
            for s in 0..<seconds {
                t.add(gateway: 0, rssi: -70, weight: 1, power: -59, at: Double(s))
                t.close(likelihood: [1, 0.5], moves: s == 0 ? nil : moves)
            }
            return t
        }
        var long = settled(for: 120), short = settled(for: 2)
        #expect(long.stayShare(0) > 0.8 && short.stayShare(0) < 0.2)
        func secondsUntilRegion1Leads(_ t: inout RegionTracker, from start: Int) -> Int {
            for k in 0..<60 {
                t.add(gateway: 0, rssi: -70, weight: 1, power: -59, at: Double(start + k))
                t.close(likelihood: [0.25, 1], moves: moves)
                if t.alpha[1] > t.alpha[0] { return k + 1 }
            }
            return 60
        }
        let newcomer = secondsUntilRegion1Leads(&short, from: 2), stayer = secondsUntilRegion1Leads(&long, from: 120)
        #expect(newcomer < stayer, "just arrived: \(newcomer) s; stayed two minutes: \(stayer) s")
        #expect(stayer <= 10, "a stay still yields to evidence within seconds")
    }

    /// Closes one second (whole second `second`) with `likelihood` and finalises what the lag
    /// leaves due, keeping `keep` finalised seconds.
    static func step(_ t: inout RegionTracker, second: Int, likelihood: [Float], lag: Int = 2, keep: Int = 6) {
        t.add(gateway: 0, rssi: -70, weight: 1, power: -59, at: Double(second) + 0.25)
        let m = likelihood.count
        let moves: [Float] = (0..<(m * m)).map { $0 / m == $0 % m ? 0 : 1 / Float(m - 1) }
        t.close(likelihood: likelihood, moves: t.lastSecond == .min ? nil : moves)
        while t.pendingCount > lag { _ = t.finalizeOldest(keepingPast: keep) { _ in SetTopology.transposed(moves, m: m) } }
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
        for damage in 0..<4 {
            var d = RegionTracker()
            d.reset(states: 3, on: 0)
            for s in 0..<6 { Self.step(&d, second: s, likelihood: [1, 0.5, 0.1]) }
            #expect(d.isConsistent)
            switch damage {
            case 0: d.costs.removeLast()
            case 1: d.held = d.times.count + 1
            case 2: d.pendingAlpha.append(0.5)
            default: d.phases.removeLast()
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
