#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The probabilistic current-region tracker of one device (docs/fusion.md): a hidden Markov model
/// over the regions of the device's monitored set, in steps of one second of evidence time.
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
    /// Pending seconds, oldest first: first-evidence time, gap (s) since the second before it,
    /// likelihood (m each) and filtered probabilities (m each).
    var pendingTime: [Double] = []
    var pendingGap: [Float] = []
    var pendingLikelihood: [Float] = []
    var pendingAlpha: [Float] = []
    /// Recently finalised seconds, oldest first, kept to date a recorded move (`changePoint`): the
    /// whole second and each state's log-likelihood, −ln(likelihood scaled to the second's best)
    /// in eighths of a nat, clamped to 255 (m each). A byte a state: a second's evidence between
    /// two regions differs by a few nats, and 32 nats is beyond any doubt.
    var pastSecond: [Int64] = []
    var pastCost: [UInt8] = []

    var stateCount: Int { alpha.count }
    var hasOpenSecond: Bool { openSecond != .min }
    var pendingCount: Int { pendingTime.count }

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

    /// Starts over with `m` states, all probability on `state` (or spread evenly when nil).
    mutating func reset(states m: Int, on state: Int?) {
        alpha = [Float](repeating: state == nil ? 1 / Float(max(m, 1)) : 0, count: m)
        if let state, state < m { alpha[state] = 1 }
        pendingTime.removeAll(); pendingGap.removeAll(); pendingLikelihood.removeAll(); pendingAlpha.removeAll()
        pastSecond.removeAll(); pastCost.removeAll()
        lastSecond = .min
    }

    /// Follows a new monitored set: `map[i]` is the old index of new state i, or nil for a region
    /// that just joined (it gets a small share now and, in the pending seconds, the least likely
    /// region's likelihood: no evidence was weighed for it).
    mutating func remap(_ map: [Int?]) {
        let m = map.count, old = alpha.count
        guard old > 0 else { reset(states: m, on: nil); return }
        let fresh: Float = 1e-3
        var a = [Float](repeating: 0, count: m)
        for (i, o) in map.enumerated() { a[i] = o.map { alpha[$0] } ?? fresh }
        alpha = Self.normalised(a)
        let n = pendingCount
        var lik = [Float](repeating: 0, count: n * m), pa = [Float](repeating: 0, count: n * m)
        for p in 0..<n {
            let row = pendingLikelihood[(p * old)..<((p + 1) * old)]
            let floor = row.min() ?? 0
            for (i, o) in map.enumerated() {
                lik[p * m + i] = o.map { pendingLikelihood[p * old + $0] } ?? floor
                pa[p * m + i] = o.map { pendingAlpha[p * old + $0] } ?? fresh
            }
            let s = pa[(p * m)..<((p + 1) * m)].reduce(0, +)
            if s > 0 { for i in 0..<m { pa[p * m + i] /= s } }
        }
        pendingLikelihood = lik
        pendingAlpha = pa
        let k = pastSecond.count
        var cost = [UInt8](repeating: 0, count: k * m)
        for p in 0..<k {
            let row = pastCost[(p * old)..<((p + 1) * old)]
            let worst = row.max() ?? 0
            for (i, o) in map.enumerated() { cost[p * m + i] = o.map { pastCost[p * old + $0] } ?? worst }
        }
        pastCost = cost
    }

    /// Sizes the pending arrays for `lag` + 1 seconds of `m` states, so they never grow by doubling
    /// (per-device memory is part of the engine's budget).
    mutating func reserve(lag: Int) {
        let m = alpha.count, n = lag + 1, k = Self.pastCount(lag: lag)
        if pendingTime.capacity < n { pendingTime.reserveCapacity(n); pendingGap.reserveCapacity(n) }
        if pendingLikelihood.capacity < n * m {
            pendingLikelihood.reserveCapacity(n * m)
            pendingAlpha.reserveCapacity(n * m)
        }
        if pastSecond.capacity < k { pastSecond.reserveCapacity(k) }
        if pastCost.capacity < k * m { pastCost.reserveCapacity(k * m) }
    }

    /// How many finalised seconds are kept for dating moves with a smoothing lag of `lag`: a move
    /// may be dated up to `lag` seconds before the second in which the new region first led, and
    /// that second may lie up to `lag` + 1 seconds before the one that confirms the move (the one
    /// just finalised). A region that led longer before reaching the odds has its look-back cut
    /// short by what is held. (About 220 bytes a device at the default lag of 3 s.)
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
        for (p, second) in pastSecond.enumerated() where second >= lo && second < firstLed && Double(second) > after {
            if sum >= best { best = sum; bestSecond = second }
            sum += Int(pastCost[p * m + b]) - Int(pastCost[p * m + a])
        }
        return sum >= best ? firstLed : bestSecond
    }

    /// The prediction for the open second: the filtered probabilities carried through the
    /// transition matrix for the gap (nil: the first second, `alpha` as it stands).
    func predict(transition: [Float]?) -> [Float] {
        var a = [Float](repeating: 0, count: alpha.count)
        a.withUnsafeMutableBufferPointer { predict(transition: transition, into: $0) }
        return a
    }

    /// `predict(transition:)` into `out` (`stateCount` entries), without allocating: the engine
    /// calls it for every device-second with stack scratch (`DeviceState.closeSecond`).
    func predict(transition: [Float]?, into out: UnsafeMutableBufferPointer<Float>) {
        let m = alpha.count
        alpha.withUnsafeBufferPointer { from in
            guard let transition else {
                for j in 0..<m { out[j] = from[j] }
                return
            }
            transition.withUnsafeBufferPointer { t in
                Self.weightedRowSum(from.baseAddress!, rows: t.baseAddress!, count: m, positiveOnly: true, into: out.baseAddress!)
            }
        }
    }

    /// Closes the open second given its likelihood per state and the transition matrix for the
    /// gap since the last closed second (nil: first second, the prior is `alpha` as it stands).
    mutating func close(likelihood: [Float], transition: [Float]?) {
        close(likelihood: likelihood, prior: predict(transition: transition))
    }

    /// Closes the open second given its likelihood per state and its prediction (`predict`). The
    /// second's readings stay in `heard` until the caller clears them.
    mutating func close(likelihood: [Float], prior: [Float]) {
        likelihood.withUnsafeBufferPointer { l in prior.withUnsafeBufferPointer { p in close(likelihood: l, prior: p) } }
    }

    /// `close(likelihood:prior:)` over buffers of `stateCount` entries, without allocating: the
    /// filter step is done in `alpha`'s own storage, alpha[j] = prior[j]·likelihood[j] / Σ, the sum
    /// taken in index order from 0 as `reduce(0, +)` does, so the result is bit for bit that of
    /// multiplying a copy of the prior and normalising it (`TrackerModelTests`).
    mutating func close(likelihood: UnsafeBufferPointer<Float>, prior: UnsafeBufferPointer<Float>) {
        let m = alpha.count
        var sum: Float = 0
        alpha.withUnsafeMutableBufferPointer { a in
            for j in 0..<m { a[j] = prior[j] * likelihood[j] }
            for j in 0..<m { sum += a[j] }
            if sum > 0 && sum.isFinite { for j in 0..<m { a[j] /= sum } }
        }
        // Evidence that contradicts every state (sum 0 after underflow): trust the evidence.
        if !(sum > 0 && sum.isFinite) { alpha = Self.normalised(Array(likelihood)) }
        pendingTime.append(openTime)
        pendingGap.append(Float(lastSecond == .min ? 1 : Double(openSecond - lastSecond)))
        pendingLikelihood.append(contentsOf: likelihood)
        // From its buffer: appending the array itself retained and released it.
        alpha.withUnsafeBufferPointer { pendingAlpha.append(contentsOf: $0) }
        lastSecond = openSecond
        openSecond = .min
    }

    /// Smooths the oldest pending second with the evidence of every later pending second and
    /// removes it: its first-evidence time and smoothed probabilities. `transposed(gap)` gives
    /// the transition matrix for a gap, transposed (`SetTopology.transposed`): the backward pass
    /// computes T·β a column of T at a time, which vectorises, and each element still sums its
    /// terms in the same order as a row-by-row dot product would, so the result is bit for bit
    /// the same (`TrackerModelTests`).
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
        withUnsafeTemporaryAllocation(of: Float.self, capacity: 2 * m) { scratch in
            let beta = scratch.baseAddress!, next = beta + m
            beta.update(repeating: 1, count: m)
            pendingLikelihood.withUnsafeBufferPointer { lik in
                // The matrix depends on the gap alone, and consecutive seconds mostly have the same
                // one: it is asked for again only when the gap changes.
                var gap: Float = 0, matrix: [Float] = []
                var p = n - 1
                while p >= 1 {
                    if matrix.isEmpty || pendingGap[p] != gap {
                        gap = pendingGap[p]
                        matrix = transposed(gap)
                    }
                    matrix.withUnsafeBufferPointer { t in
                        let l = lik.baseAddress! + p * m
                        for j in 0..<m { beta[j] *= l[j] }
                        // next = T·β: next[i] = Σ_j T[i][j]·β[j], summed in order of j (row j of
                        // the transposed matrix is column j of T).
                        Self.weightedRowSum(beta, rows: t.baseAddress!, count: m, positiveOnly: false, into: next)
                        var total: Float = 0
                        for i in 0..<m { total += next[i] }
                        if total > 0 && total.isFinite {
                            let inv = 1 / total
                            for i in 0..<m { beta[i] = next[i] * inv }
                        }
                    }
                    p -= 1
                }
            }
            pendingAlpha.withUnsafeBufferPointer { a in for i in 0..<m { post[i] = a[i] * beta[i] } }
        }
        let time = pendingTime[0]
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
        return state.map { (pendingTime[0], $0) }
    }

    /// Removes the oldest pending second: the later ones move down in place and the arrays keep
    /// their capacity (`removeFirst(m)` went through the generic range replacement for every
    /// device-second).
    private mutating func dropOldest(_ m: Int, keepingPast keep: Int) {
        if keep > 0, let time = pendingTime.first { holdPast(second: Int64(time.rounded(.down)), m, keep: keep) }
        Self.removeFirst(1, of: &pendingTime)
        Self.removeFirst(1, of: &pendingGap)
        Self.removeFirst(m, of: &pendingLikelihood)
        Self.removeFirst(m, of: &pendingAlpha)
    }

    /// Adds the oldest pending second to the held ones (dropping the oldest held beyond `keep`),
    /// in place: once `keep` seconds are held the rows move down one and the new one overwrites
    /// the last (element-wise appends cost a uniqueness check each, for every device-second).
    private mutating func holdPast(second: Int64, _ m: Int, keep: Int) {
        if pastCost.count != pastSecond.count * m { pastSecond.removeAll(); pastCost.removeAll() }
        if pastSecond.count >= keep {
            let extra = pastSecond.count - keep
            if extra > 0 {
                Self.removeFirst(extra, of: &pastSecond)
                Self.removeFirst(extra * m, of: &pastCost)
            }
            pastSecond.withUnsafeMutableBufferPointer { s in
                s.baseAddress!.update(from: s.baseAddress! + 1, count: s.count - 1)
                s[s.count - 1] = second
            }
            pastCost.withUnsafeMutableBufferPointer { c in
                c.baseAddress!.update(from: c.baseAddress! + m, count: c.count - m)
            }
        } else {
            pastSecond.append(second)
            pastCost.append(contentsOf: repeatElement(0, count: m))
        }
        let row = pastCost.count - m
        pastCost.withUnsafeMutableBufferPointer { c in
            pendingLikelihood.withUnsafeBufferPointer { l in
                for i in 0..<m { c[row + i] = Self.cost(l[i]) }
            }
        }
    }

    /// `pastCost` units per nat.
    static let costScale: Float = 8

    /// −ln(l) in `pastCost` units for a likelihood in [0, 1] (scaled to its second's best), from
    /// the float's exponent and mantissa: log2(l) ≈ exponent + (mantissa − 1), off by at most
    /// 0.09 bits (0.06 nat, half a unit), for a fraction of `logf`'s cost (this runs for every
    /// region of every finalised device-second). 0 and values below 2⁻⁴⁶ cost 255 (32 nats).
    @inline(__always)
    static func cost(_ l: Float) -> UInt8 {
        guard l > 0 else { return 255 }
        let bits = Int32(bitPattern: min(l, 1).bitPattern)
        // (bits − bits(1.0)) / 2²³ is the approximation of log2(l), ≤ 0 here.
        let log2 = Float(bits - 0x3F80_0000) * (1 / 8_388_608)
        return UInt8(min(255, (-log2 * (0.693_147_2 * costScale)).rounded()))
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
        heard.capacity * MemoryLayout<Heard>.stride + alpha.capacity * 4 + pendingTime.capacity * 8
            + pendingGap.capacity * 4 + (pendingLikelihood.capacity + pendingAlpha.capacity) * 4
            + pastSecond.capacity * 8 + pastCost.capacity + 8 * 32
    }
}
