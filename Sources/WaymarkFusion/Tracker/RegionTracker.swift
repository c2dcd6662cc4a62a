#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The probabilistic current-region tracker of one device (docs/fusion.md): a hidden Markov model
/// over the regions of the device's monitored set, in steps of one second of evidence time. Each
/// region has two hidden phases, passing and staying (`MotionModel.Dwell`); the vectors hold each
/// region's probability (both phases), and `phases` the staying part of it.
///
/// Readings are gathered per second (`add`); when a later second begins the second is closed:
/// its likelihood per region (`EvidenceModel`), a forward-filter step through the movement model
/// (`MotionModel`) gives the **live** probabilities at once, and the second joins the `pending`
/// ones. Once `lag` later seconds have been closed, the oldest pending second is **smoothed** with
/// their evidence (a backward pass) and becomes final: that is the recorded history. Probabilities
/// are kept normalised in linear space (each step renormalises; likelihoods are scaled by their
/// maximum before leaving log space), so nothing under- or overflows.
///
/// The probability vectors are aligned with `DeviceState.slots` (index i is slot i's region);
/// `remap` follows a rotation of the set.
struct RegionTracker: Sendable, Hashable, Codable {
    struct Heard: Sendable, Hashable, Codable {
        var gateway: Int32
        var sum: Float
        var count: Float
    }

    /// The open second (whole seconds of evidence time); `Int64.min` when none is open.
    var openSecond: Int64 = .min
    /// Time of the first reading of the open second.
    var openTime: Double = 0
    /// Gateways that heard the device in the open second (RSSI after the site's offsets).
    var heard: [Heard] = []
    /// Sum of the readings' measured power, for their mean.
    var powerSum: Double = 0
    /// Filtered probabilities after the last closed second.
    var alpha: [Float] = []
    /// The last closed second.
    var lastSecond: Int64 = .min
    /// Closed seconds, oldest first: the `held` finalised ones kept to date a recorded move
    /// (`changePoint`), then the pending ones waiting for the lag. For each, its first-evidence
    /// time and each state's likelihood as a *cost*, −ln(likelihood ÷ the second's best) in
    /// sixteenths of a nat, clamped to 255 (m each; `cost`). A byte a state instead of a float
    /// (per-device memory is part of the engine's budget): a second's weighted evidence between two
    /// regions differs by a few nats, 16 nats is beyond doubt, and the backward pass reads the
    /// likelihood back from the cost (`likelihoodOfCost`) within 1/32 nat.
    var times: [Double] = []
    var costs: [UInt8] = []
    var held = 0
    /// Pending seconds, oldest first: the filtered probabilities (m each).
    var pendingAlpha: [Float] = []
    /// Rows of m + 1 bytes, one for each pending second (oldest first), or one when none is
    /// pending: the gap in seconds since the second before it (`gapCap` for any longer), then each
    /// region's share of its probability in which the device is staying rather than passing
    /// through (`MotionModel.Dwell`), in 255ths. The last row's shares are `alpha`'s (the newest
    /// pending second's filtered probabilities are `alpha`). Bytes, in one array, because
    /// per-device memory is part of the engine's budget: the share moves by a few hundredths a
    /// second and is read back to 1/510, and every gap beyond 120 s means the same to the motion
    /// model.
    var phases: [UInt8] = []

    var stateCount: Int { alpha.count }
    var hasOpenSecond: Bool { openSecond != .min }
    var pendingCount: Int { times.count - held }
    /// The pending seconds' first-evidence times, oldest first.
    var pendingTime: ArraySlice<Double> { times[held...] }
    /// The held seconds (whole seconds), oldest first.
    var heldSeconds: [Int64] { times[..<held].map { Int64($0.rounded(.down)) } }
    /// Whether the arrays line up with `alpha` (m states): every closed second has m costs, every
    /// pending one m filtered probabilities and a gap, and no more seconds are held than closed.
    /// A restored checkpoint that fails this (written by hand, or damaged) starts the tracker over
    /// instead of reading past an array's end.
    var isConsistent: Bool {
        let m = alpha.count
        return held >= 0 && held <= times.count && costs.count == times.count * m
            && pendingAlpha.count == pendingCount * m && phases.count == max(pendingCount, 1) * (m + 1)
    }

    /// Pending second `p`'s gap (s) since the second before it, up to `gapCap`.
    func pendingGap(_ p: Int) -> Float { Float(phases[p * (alpha.count + 1)]) }

    /// Of state `k`'s probability in `alpha`, the share in which the device is staying.
    func stayShare(_ k: Int) -> Float {
        let m = alpha.count
        guard phases.count >= m + 1 else { return 0 }
        return Self.share(phases[phases.count - m + k])
    }

    /// Gaps are stored up to this many seconds (`phases`); the motion model treats every gap
    /// beyond `MotionModel.maxGapS` as that long.
    static let gapCap = 255

    /// Pending second `p`'s likelihood of state `k` as the backward pass reads it.
    func pendingLikelihood(_ p: Int, _ k: Int) -> Float { Self.likelihoodOfCost[Int(costs[(held + p) * alpha.count + k])] }

    /// Adds one reading to the open second (which the caller has opened or closed as needed).
    mutating func add(gateway: Int32, rssi: Float, weight: Float, power: Double, at t: Double) {
        let second = Int64(t.rounded(.down))
        if openSecond == .min {
            openSecond = second
            openTime = t
            powerSum = 0
        }
        openTime = min(openTime, t)
        powerSum += power * Double(weight)
        if let i = heard.firstIndex(where: { $0.gateway == gateway }) {
            heard[i].sum += rssi * weight
            heard[i].count += weight
        } else {
            heard.append(Heard(gateway: gateway, sum: rssi * weight, count: weight))
        }
    }

    /// Puts the open second's gateways in the site's order, so that what the second teaches and
    /// every sum over its readings do not depend on the order in which readings of the same moment
    /// arrived from different gateways.
    mutating func sortHeard() {
        heard.sort { $0.gateway < $1.gateway }
    }

    /// Starts over with `m` states, all probability on `state` (or spread evenly when nil), the
    /// device passing.
    mutating func reset(states m: Int, on state: Int?) {
        alpha = [Float](repeating: state == nil ? 1 / Float(max(m, 1)) : 0, count: m)
        if let state, state < m { alpha[state] = 1 }
        phases = [UInt8](repeating: 0, count: m + 1)
        times.removeAll(); costs.removeAll(); held = 0
        pendingAlpha.removeAll()
        lastSecond = .min
    }

    /// Follows a new monitored set: `map[i]` is the old index of new state i, or nil for a region
    /// that just joined (it gets a small share now, passing, and, in the held and pending seconds,
    /// the least likely region's likelihood: no evidence was weighed for it).
    mutating func remap(_ map: [Int?]) {
        let m = map.count, old = alpha.count
        guard old > 0 else { reset(states: m, on: nil); return }
        let rowCount = max(pendingCount, 1)
        if phases.count != rowCount * (old + 1) {
            // Phases that do not line up with the other vectors (a state built by hand; a restored
            // checkpoint that fails `isConsistent` is started over instead): every region
            // passing, every gap a second.
            phases = [UInt8](repeating: 0, count: rowCount * (old + 1))
            for r in 0..<rowCount { phases[r * (old + 1)] = 1 }
        }
        let fresh: Float = 1e-3
        var a = [Float](repeating: 0, count: m)
        for (i, o) in map.enumerated() { a[i] = o.map { alpha[$0] } ?? fresh }
        alpha = Self.normalised(a)
        let n = pendingCount, rows = times.count
        var pa = [Float](repeating: 0, count: n * m)
        for p in 0..<n {
            for (i, o) in map.enumerated() { pa[p * m + i] = o.map { pendingAlpha[p * old + $0] } ?? fresh }
            let s = pa[(p * m)..<((p + 1) * m)].reduce(0, +)
            if s > 0 { for i in 0..<m { pa[p * m + i] /= s } }
        }
        pendingAlpha = pa
        // Shares are of each region's own probability: renormalising leaves them as they are.
        var rowsOut = [UInt8](repeating: 0, count: rowCount * (m + 1))
        for r in 0..<rowCount {
            rowsOut[r * (m + 1)] = phases[r * (old + 1)]
            for (i, o) in map.enumerated() { rowsOut[r * (m + 1) + 1 + i] = o.map { phases[r * (old + 1) + 1 + $0] } ?? 0 }
        }
        phases = rowsOut
        var cost = [UInt8](repeating: 0, count: rows * m)
        for r in 0..<rows {
            let worst = costs[(r * old)..<((r + 1) * old)].max() ?? 0
            for (i, o) in map.enumerated() { cost[r * m + i] = o.map { costs[r * old + $0] } ?? worst }
        }
        costs = cost
    }

    /// Sizes the arrays for `lag` + 1 pending and `pastCount(lag:)` held seconds of `m` states, so
    /// they never grow by doubling (per-device memory is part of the engine's budget).
    mutating func reserve(lag: Int) {
        let m = alpha.count, n = lag + 1, rows = n + Self.pastCount(lag: lag)
        if pendingAlpha.capacity < n * m { pendingAlpha.reserveCapacity(n * m) }
        if phases.capacity < n * (m + 1) { phases.reserveCapacity(n * (m + 1)) }
        if times.capacity < rows { times.reserveCapacity(rows) }
        if costs.capacity < rows * m { costs.reserveCapacity(rows * m) }
    }

    /// How many finalised seconds are kept for dating moves with a smoothing lag of `lag`: a move
    /// may be dated up to `lag` seconds before the second in which the new region first led, and
    /// that second may lie up to `lag` + 1 seconds before the one that confirms the move (the one
    /// just finalised). A region that led longer before reaching the odds has its look-back cut
    /// short by what is held.
    static func pastCount(lag: Int) -> Int { 2 * lag + 2 }

    /// When the device most likely moved from state `a` to state `b`, given that it did, no earlier
    /// than `lookBack` seconds before `firstLed` (the first finalised second in which `b` led) and
    /// after `after` (when the current visit began): the whole second `c` that maximises the
    /// likelihood of the held evidence under "`a` before `c`, `b` from `c` on" — the
    /// maximum-likelihood change point between two segments. The seconds from `firstLed` on count
    /// the same for every candidate, so only those before it decide; on a tie the later second wins
    /// (no earlier date without evidence for it). Returns `firstLed` when nothing earlier is
    /// better or held.
    func changePoint(from a: Int, to b: Int, firstLed: Int64, lookBack: Int, after: Double) -> Int64 {
        let m = alpha.count
        guard a < m, b < m, a != b else { return firstLed }
        let lo = firstLed - Int64(lookBack)
        // Running Σ (ln L_a − ln L_b) over the held seconds before each candidate; a candidate's
        // score is the sum over the seconds before it (they stay in a). The score of `firstLed`
        // is the whole sum.
        var sum = 0, best = Int.min, bestSecond = firstLed
        for p in 0..<held {
            let second = Int64(times[p].rounded(.down))
            guard second >= lo && second < firstLed && Double(second) > after else { continue }
            if sum >= best { best = sum; bestSecond = second }
            sum += Int(costs[p * m + b]) - Int(costs[p * m + a])
        }
        return sum >= best ? firstLed : bestSecond
    }

    /// The prediction for the open second, each region's probability and its staying part: the
    /// filtered probabilities carried through the movement model (`MotionModel`) for a gap of
    /// `gap` seconds, `moves` being where a leaving device goes (`MotionModel.matrix`; nil: the
    /// first second, `alpha` as it stands).
    func predict(moves: [Float]?, gap: Float = 1) -> (prior: [Float], stay: [Float]) {
        var a = [Float](repeating: 0, count: alpha.count), st = a
        a.withUnsafeMutableBufferPointer { p in st.withUnsafeMutableBufferPointer { predict(moves: moves, gap: gap, into: p, stay: $0) } }
        return (a, st)
    }

    /// `predict(moves:gap:)` into `out` and `stay` (`stateCount` entries each), without allocating
    /// on the heap: the engine calls it for every device-second with stack scratch
    /// (`DeviceState.closeSecond`). Passing mass keeps, leaves or settles, staying mass keeps or
    /// leaves (`MotionModel.Dwell.rates`); what leaves region i goes to j with `moves[i][j]` and
    /// arrives passing.
    func predict(moves: [Float]?, gap: Float, into out: UnsafeMutableBufferPointer<Float>, stay: UnsafeMutableBufferPointer<Float>) {
        let m = alpha.count
        // The filtered staying part of each region (the last row of `phases`), once.
        let phased = phases.count > m, current = phases.count - m
        for j in 0..<m { stay[j] = phased ? alpha[j] * Self.share(phases[current + j]) : 0 }
        guard let moves else {
            for j in 0..<m { out[j] = alpha[j] }
            return
        }
        let rates = MotionModel.Dwell.rates(gap: gap)
        withUnsafeTemporaryAllocation(of: Float.self, capacity: m) { leaving in
            // What leaves each region, and (in `out`) where it arrives.
            for i in 0..<m { leaving[i] = (alpha[i] - stay[i]) * rates.leavePass + stay[i] * rates.leaveStay }
            moves.withUnsafeBufferPointer { t in
                Self.weightedRowSum(leaving.baseAddress!, rows: t.baseAddress!, count: m, positiveOnly: true, into: out.baseAddress!)
            }
            for j in 0..<m {
                let passing = alpha[j] - stay[j]
                let staying = stay[j] * (1 - rates.leaveStay) + passing * rates.settle
                out[j] += passing * rates.keep + staying
                stay[j] = staying
            }
        }
    }

    /// Closes the open second given its likelihood per state and the move matrix for the gap since
    /// the last closed second (nil: first second, the prior is `alpha` as it stands).
    mutating func close(likelihood: [Float], moves: [Float]?) {
        let gap = lastSecond == .min || openSecond == .min ? 1 : Float(openSecond - lastSecond)
        let (prior, stay) = predict(moves: moves, gap: gap)
        close(likelihood: likelihood, prior: prior, stay: stay)
    }

    /// Closes the open second given its likelihood per state and its prediction (`predict`). The
    /// second's readings stay in `heard` until the caller clears them.
    mutating func close(likelihood: [Float], prior: [Float], stay: [Float]) {
        likelihood.withUnsafeBufferPointer { l in prior.withUnsafeBufferPointer { p in stay.withUnsafeBufferPointer { s in
            close(likelihood: l, prior: p, stay: s)
        } } }
    }

    /// `close(likelihood:prior:stay:)` over buffers of `stateCount` entries, without allocating:
    /// the filter step is done in `alpha`'s own storage, alpha[j] = prior[j]·likelihood[j] / Σ, the
    /// sum taken in index order from 0 as `reduce(0, +)` does, so the result is bit for bit that of
    /// multiplying a copy of the prior and normalising it (`TrackerModelTests`); the staying part
    /// likewise (both phases of a region have its likelihood).
    mutating func close(likelihood: UnsafeBufferPointer<Float>, prior: UnsafeBufferPointer<Float>, stay: UnsafeBufferPointer<Float>) {
        let m = alpha.count
        var sum: Float = 0
        alpha.withUnsafeMutableBufferPointer { a in
            for j in 0..<m { a[j] = prior[j] * likelihood[j] }
            for j in 0..<m { sum += a[j] }
            if sum > 0 && sum.isFinite { for j in 0..<m { a[j] /= sum } }
        }
        // The new pending second's row (in place of the lone row when none was pending): its gap
        // and the prediction's staying shares (both phases of a region have its likelihood).
        let valid = sum > 0 && sum.isFinite
        let gap = lastSecond == .min ? 1 : min(max(openSecond - lastSecond, 1), Int64(Self.gapCap))
        if pendingCount > 0 && phases.count == pendingCount * (m + 1) {
            phases.append(contentsOf: repeatElement(0, count: m + 1))
        } else if phases.count != m + 1 {
            phases = [UInt8](repeating: 0, count: m + 1)
        }
        let phaseRow = phases.count - (m + 1)
        phases.withUnsafeMutableBufferPointer { st in
            st[phaseRow] = UInt8(gap)
            for j in 0..<m { st[phaseRow + 1 + j] = valid ? Self.shareByte(stay[j], of: prior[j]) : 0 }
        }
        // Evidence that contradicts every state (sum 0 after underflow): trust the evidence (the
        // device passing).
        if !valid { alpha = Self.normalised(Array(likelihood)) }
        times.append(openTime)
        let row = costs.count
        costs.append(contentsOf: repeatElement(0, count: m))
        costs.withUnsafeMutableBufferPointer { c in for j in 0..<m { c[row + j] = Self.cost(likelihood[j]) } }
        // From its buffer: appending the array itself retained and released it.
        alpha.withUnsafeBufferPointer { pendingAlpha.append(contentsOf: $0) }
        lastSecond = openSecond
        openSecond = .min
    }

    /// Smooths the oldest pending second with the evidence of every later pending second and
    /// removes it: its first-evidence time and smoothed probabilities. `transposed(gap)` gives
    /// the move matrix for a gap, transposed (`SetTopology.transposed`): the backward pass
    /// computes M·β a column of M at a time, which vectorises, each element summing its terms in
    /// the same order as a row-by-row dot product would (`TrackerModelTests`).
    mutating func finalizeOldest(keepingPast keepPast: Int = 0, transposed: (Float) -> [Float]) -> (time: Double, posterior: [Float]) {
        var post = [Float](repeating: 0, count: alpha.count)
        let time = post.withUnsafeMutableBufferPointer { finalizeOldest(into: $0, keepingPast: keepPast, transposed: transposed) }
        return (time, post)
    }

    /// `finalizeOldest(transposed:)` with the smoothed probabilities written into `post`
    /// (`stateCount` entries) instead of a new array; returns the second's first-evidence time.
    /// The second's likelihood joins the `keepPast` finalised seconds held for `changePoint`.
    mutating func finalizeOldest(into post: UnsafeMutableBufferPointer<Float>, keepingPast keepPast: Int = 0,
                                 transposed: (Float) -> [Float]) -> Double {
        let m = alpha.count, n = pendingCount
        // When every pending second's filter is all but certain of one region, later evidence
        // cannot change the oldest one's answer: skip the backward pass (most seconds of a device
        // that stays somewhere).
        if let settled = settledRegion() {
            pendingAlpha.withUnsafeBufferPointer { a in for i in 0..<m { post[i] = a[i] } }
            dropOldest(m, keepingPast: keepPast)
            return settled.time
        }
        // β per phase: the likelihood of the later pending seconds' evidence given the region and
        // that the device is passing (`beta`) or staying (`betaStay`) in it.
        withUnsafeTemporaryAllocation(of: Float.self, capacity: 3 * m) { scratch in
            let beta = scratch.baseAddress!, betaStay = beta + m, next = beta + 2 * m
            beta.update(repeating: 1, count: m)
            betaStay.update(repeating: 1, count: m)
            costs.withUnsafeBufferPointer { cost in
            Self.likelihoodOfCost.withUnsafeBufferPointer { linear in
                // The matrix depends on the gap alone, and consecutive seconds mostly have the same
                // one: it is asked for again only when the gap changes.
                var gap: Float = 0, matrix: [Float] = []
                var rates = MotionModel.Dwell.rates(gap: 1)
                var p = n - 1
                while p >= 1 {
                    if matrix.isEmpty || pendingGap(p) != gap {
                        gap = pendingGap(p)
                        matrix = transposed(gap)
                        rates = MotionModel.Dwell.rates(gap: gap)
                    }
                    matrix.withUnsafeBufferPointer { t in
                        let c = cost.baseAddress! + (held + p) * m
                        for j in 0..<m {
                            let l = linear[Int(c[j])]
                            beta[j] *= l
                            betaStay[j] *= l
                        }
                        // next = M·β: next[i] = Σ_j M[i][j]·β[j] (row j of the transposed matrix is
                        // column j of M): the evidence ahead for a device that leaves i, arriving
                        // passing.
                        Self.weightedRowSum(beta, rows: t.baseAddress!, count: m, positiveOnly: false, into: next)
                        var total: Float = 0
                        for i in 0..<m {
                            let passing = rates.leavePass * next[i] + rates.keep * beta[i] + rates.settle * betaStay[i]
                            let staying = rates.leaveStay * next[i] + (1 - rates.leaveStay) * betaStay[i]
                            next[i] = passing
                            betaStay[i] = staying
                            total += passing + staying
                        }
                        if total > 0 && total.isFinite {
                            let inv = 1 / total
                            for i in 0..<m {
                                beta[i] = next[i] * inv
                                betaStay[i] *= inv
                            }
                        } else {
                            for i in 0..<m { beta[i] = next[i] }
                        }
                    }
                    p -= 1
                }
            }
            }
            pendingAlpha.withUnsafeBufferPointer { a in
                phases.withUnsafeBufferPointer { st in
                    // The oldest pending second's shares: the first row.
                    for i in 0..<m {
                        let staying = a[i] * Self.share(st[1 + i])
                        post[i] = (a[i] - staying) * beta[i] + staying * betaStay[i]
                    }
                }
            }
        }
        let time = times[held]
        dropOldest(m, keepingPast: keepPast)
        Self.normalise(post)
        return time
    }

    /// out[k] = Σ_i w[i] · rows[i·m + k] for k in 0..<m: the rows of an m × m matrix weighted and
    /// added up, skipping the rows whose weight is not above 0 when `positiveOnly` (the prediction
    /// from a filter with exact zeros). Each element is summed from 0 in order of i, one multiply
    /// then one add per row (no fused multiply-add), so the result is bit for bit that of the
    /// scalar `out[k] = 0; for i { out[k] += w[i] * rows[i·m + k] }` (`TrackerModelTests`).
    ///
    /// Written out because it is the prediction's and the backward pass's whole work (m² per
    /// device-second and per pending second): the sums stay in SIMD registers for a block of up to
    /// 20 columns while the rows go by, instead of a load and a store of every element per row
    /// (the scalar loop's checked index arithmetic kept the compiler from vectorising it at all).
    @inline(__always)
    static func weightedRowSum(_ w: UnsafePointer<Float>, rows: UnsafePointer<Float>, count m: Int, positiveOnly: Bool,
                               into out: UnsafeMutablePointer<Float>) {
        var c = 0
        // 20 columns at a time (the default monitored set in one pass), then 8, 4 and 1.
        while m &- c >= 20 {
            var s0 = SIMD8<Float>(), s1 = SIMD8<Float>(), s2 = SIMD4<Float>()
            for i in 0..<m {
                let wi = w[i]
                if positiveOnly && !(wi > 0) { continue }
                let row = UnsafeRawPointer(rows + (i &* m &+ c))
                s0 = s0 + SIMD8(repeating: wi) * row.loadUnaligned(as: SIMD8<Float>.self)
                s1 = s1 + SIMD8(repeating: wi) * row.loadUnaligned(fromByteOffset: 32, as: SIMD8<Float>.self)
                s2 = s2 + SIMD4(repeating: wi) * row.loadUnaligned(fromByteOffset: 64, as: SIMD4<Float>.self)
            }
            let o = UnsafeMutableRawPointer(out + c)
            o.storeBytes(of: s0, as: SIMD8<Float>.self)
            o.storeBytes(of: s1, toByteOffset: 32, as: SIMD8<Float>.self)
            o.storeBytes(of: s2, toByteOffset: 64, as: SIMD4<Float>.self)
            c &+= 20
        }
        while m &- c >= 8 {
            var s = SIMD8<Float>()
            for i in 0..<m {
                let wi = w[i]
                if positiveOnly && !(wi > 0) { continue }
                s = s + SIMD8(repeating: wi) * UnsafeRawPointer(rows + (i &* m &+ c)).loadUnaligned(as: SIMD8<Float>.self)
            }
            UnsafeMutableRawPointer(out + c).storeBytes(of: s, as: SIMD8<Float>.self)
            c &+= 8
        }
        if m &- c >= 4 {
            var s = SIMD4<Float>()
            for i in 0..<m {
                let wi = w[i]
                if positiveOnly && !(wi > 0) { continue }
                s = s + SIMD4(repeating: wi) * UnsafeRawPointer(rows + (i &* m &+ c)).loadUnaligned(as: SIMD4<Float>.self)
            }
            UnsafeMutableRawPointer(out + c).storeBytes(of: s, as: SIMD4<Float>.self)
            c &+= 4
        }
        while c < m {
            var s: Float = 0
            for i in 0..<m {
                let wi = w[i]
                if positiveOnly && !(wi > 0) { continue }
                s = s + wi * rows[i &* m &+ c]
            }
            out[c] = s
            c &+= 1
        }
    }

    /// Probability above which a filtered second counts as certain (`finalizeOldest`).
    static let certain: Float = 0.999

    /// The oldest pending second's time when every pending second's filtered probabilities put at
    /// least `certain` on the same state.
    func settledRegion() -> (time: Double, state: Int)? {
        let m = alpha.count, n = pendingCount
        guard n > 0, m > 0 else { return nil }
        let state: Int? = pendingAlpha.withUnsafeBufferPointer { a in
            var state = -1
            for p in 0..<n {
                let row = a.baseAddress! + p * m
                var best = 0
                for i in 1..<m where row[i] > row[best] { best = i }
                guard row[best] >= Self.certain, state < 0 || best == state else { return nil }
                state = best
            }
            return state
        }
        return state.map { (times[held], $0) }
    }

    /// Removes the oldest pending second: it joins the held ones, of which the `keep` newest stay
    /// (the rows of the older ones are dropped by moving the later ones down in place: the arrays
    /// keep their capacity); the pending arrays move down in place too.
    private mutating func dropOldest(_ m: Int, keepingPast keep: Int) {
        held += 1
        if held > keep {
            let drop = held - keep
            Self.removeFirst(drop, of: &times)
            Self.removeFirst(drop * m, of: &costs)
            held = keep
        }
        Self.removeFirst(m, of: &pendingAlpha)
        // The last pending second's row stays as `alpha`'s.
        if phases.count > m + 1 { Self.removeFirst(m + 1, of: &phases) }
    }

    /// `costs` units per nat.
    static let costScale: Float = 16

    /// The likelihood a cost stands for: e^(−cost / `costScale`).
    static let likelihoodOfCost: [Float] = (0...255).map { expf(-Float($0) / costScale) }

    /// −ln(l) in `costs` units for a likelihood in [0, 1] (scaled to its second's best), rounded;
    /// 0 and values below e^−16 cost 255. (A bit-level log2 — exponent plus mantissa − 1 — was
    /// tried: its error of up to 0.06 nat, biased by the mantissa, added 1–2 % to the suite's
    /// flaps through the backward pass.)
    @inline(__always)
    static func cost(_ l: Float) -> UInt8 {
        guard l > 0 else { return 255 }
        return UInt8(min(255, (-logf(min(l, 1)) * costScale).rounded()))
    }

    /// `a.removeFirst(k)` for an array of plain values (numbers), as a forward copy within its storage.
    private static func removeFirst<T: BitwiseCopyable>(_ k: Int, of a: inout [T]) {
        let n = a.count
        guard k > 0, n >= k else { return }
        a.withUnsafeMutableBufferPointer { b in
            // One overlapping move down (`update(from:count:)` copies forward here, so each
            // element is read before it is overwritten).
            if n > k { b.baseAddress!.update(from: b.baseAddress! + k, count: n - k) }
        }
        a.removeLast(k)
    }

    /// A staying share stored as a byte (255ths), and back.
    @inline(__always)
    static func shareByte(_ part: Float, of total: Float) -> UInt8 {
        guard total > 0, part > 0 else { return 0 }
        return UInt8(min(1, part / total) * 255 + 0.5)
    }

    @inline(__always)
    static func share(_ byte: UInt8) -> Float { Float(byte) * (1 / 255) }

    /// `normalised` in place: the same sum (in index order from 0) and the same divisions.
    static func normalise(_ v: UnsafeMutableBufferPointer<Float>) {
        var s: Float = 0
        for i in 0..<v.count { s += v[i] }
        guard s > 0 && s.isFinite else {
            let even = 1 / Float(max(v.count, 1))
            for i in 0..<v.count { v[i] = even }
            return
        }
        for i in 0..<v.count { v[i] /= s }
    }

    static func normalised(_ v: [Float]) -> [Float] {
        let s = v.reduce(0, +)
        guard s > 0 && s.isFinite else { return [Float](repeating: 1 / Float(max(v.count, 1)), count: v.count) }
        return v.map { $0 / s }
    }

    /// Index and value of the largest entry (the first on ties), or nil when empty.
    static func argmax(_ v: UnsafeBufferPointer<Float>) -> (index: Int, p: Float)? {
        guard !v.isEmpty else { return nil }
        var best = 0
        for i in 1..<v.count where v[i] > v[best] { best = i }
        return (best, v[best])
    }

    static func argmax(_ v: [Float]) -> (index: Int, p: Float)? {
        guard !v.isEmpty else { return nil }
        var best = 0
        for i in 1..<v.count where v[i] > v[best] { best = i }
        return (best, v[best])
    }

    /// Bytes of its arrays, by capacity (memory accounting).
    var footprintBytes: Int {
        heard.capacity * MemoryLayout<Heard>.stride + alpha.capacity * 4 + times.capacity * 8 + costs.capacity
            + pendingAlpha.capacity * 4 + phases.capacity + 6 * 32
    }
}
