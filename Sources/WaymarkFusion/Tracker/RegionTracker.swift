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
    }

    /// Sizes the pending arrays for `lag` + 1 seconds of `m` states, so they never grow by doubling
    /// (per-device memory is part of the engine's budget).
    mutating func reserve(lag: Int) {
        let m = alpha.count, n = lag + 1
        if pendingTime.capacity < n { pendingTime.reserveCapacity(n); pendingGap.reserveCapacity(n) }
        if pendingLikelihood.capacity < n * m {
            pendingLikelihood.reserveCapacity(n * m)
            pendingAlpha.reserveCapacity(n * m)
        }
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
            for j in 0..<m { out[j] = 0 }
            transition.withUnsafeBufferPointer { t in
                let o = out.baseAddress!, rows = t.baseAddress!
                for i in 0..<m where from[i] > 0 {
                    Self.addScaled(from[i], rows + i &* m, to: o, count: m)
                }
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
        pendingAlpha.append(contentsOf: alpha)
        lastSecond = openSecond
        openSecond = .min
    }

    /// Smooths the oldest pending second with the evidence of every later pending second and
    /// removes it: its first-evidence time and smoothed probabilities. `transposed(gap)` gives
    /// the transition matrix for a gap, transposed (`SetTopology.transposed`): the backward pass
    /// computes T·β a column of T at a time, which vectorises, and each element still sums its
    /// terms in the same order as a row-by-row dot product would, so the result is bit for bit
    /// the same (`TrackerModelTests`).
    mutating func finalizeOldest(transposed: (Float) -> [Float]) -> (time: Double, posterior: [Float]) {
        var post = [Float](repeating: 0, count: alpha.count)
        let time = post.withUnsafeMutableBufferPointer { finalizeOldest(into: $0, transposed: transposed) }
        return (time, post)
    }

    /// `finalizeOldest(transposed:)` with the smoothed probabilities written into `post`
    /// (`stateCount` entries) instead of a new array; returns the second's first-evidence time.
    mutating func finalizeOldest(into post: UnsafeMutableBufferPointer<Float>, transposed: (Float) -> [Float]) -> Double {
        let m = alpha.count, n = pendingCount
        // When every pending second's filter is all but certain of one region, later evidence
        // cannot change the oldest one's answer: skip the backward pass (most seconds of a device
        // that stays somewhere).
        if let settled = settledRegion() {
            pendingAlpha.withUnsafeBufferPointer { a in for i in 0..<m { post[i] = a[i] } }
            dropOldest(m)
            return settled.time
        }
        withUnsafeTemporaryAllocation(of: Float.self, capacity: 2 * m) { scratch in
            let beta = scratch.baseAddress!, next = beta + m
            beta.update(repeating: 1, count: m)
            pendingLikelihood.withUnsafeBufferPointer { lik in
                var p = n - 1
                while p >= 1 {
                    let matrix = transposed(pendingGap[p])
                    matrix.withUnsafeBufferPointer { t in
                        let l = lik.baseAddress! + p * m
                        for j in 0..<m { beta[j] *= l[j] }
                        // next = T·β: next[i] = Σ_j T[i][j]·β[j], summed in order of j.
                        next.update(repeating: 0, count: m)
                        for j in 0..<m { Self.addScaled(beta[j], t.baseAddress! + j &* m, to: next, count: m) }
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
        dropOldest(m)
        Self.normalise(post)
        return time
    }

    /// y[k] += a · x[k] for k in 0..<n, eight at a time (then four). Each element gets the same product and
    /// the same sum, in the same order over calls, as the scalar loop (a multiply, then an add: no
    /// fused multiply-add), so the results are bit for bit those of `y[k] += a * x[k]`; written
    /// out because the scalar loop's checked index arithmetic kept the compiler from vectorising
    /// it (`predict` and the backward pass are a fifth of the engine's time).
    @inline(__always)
    static func addScaled(_ a: Float, _ x: UnsafePointer<Float>, to y: UnsafeMutablePointer<Float>, count n: Int) {
        let va = SIMD8<Float>(repeating: a)
        var k = 0
        while k &+ 8 <= n {
            let vx = UnsafeRawPointer(x + k).loadUnaligned(as: SIMD8<Float>.self)
            let vy = UnsafeRawPointer(y + k).loadUnaligned(as: SIMD8<Float>.self)
            UnsafeMutableRawPointer(y + k).storeBytes(of: vy + va * vx, as: SIMD8<Float>.self)
            k &+= 8
        }
        if k &+ 4 <= n {
            let vx = UnsafeRawPointer(x + k).loadUnaligned(as: SIMD4<Float>.self)
            let vy = UnsafeRawPointer(y + k).loadUnaligned(as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(y + k).storeBytes(of: vy + SIMD4(repeating: a) * vx, as: SIMD4<Float>.self)
            k &+= 4
        }
        while k < n {
            y[k] += a * x[k]
            k &+= 1
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
    private mutating func dropOldest(_ m: Int) {
        Self.removeFirst(1, of: &pendingTime)
        Self.removeFirst(1, of: &pendingGap)
        Self.removeFirst(m, of: &pendingLikelihood)
        Self.removeFirst(m, of: &pendingAlpha)
    }

    /// `a.removeFirst(k)` for a plain numeric array, as a forward copy within its storage.
    private static func removeFirst<T: BinaryFloatingPoint>(_ k: Int, of a: inout [T]) {
        let n = a.count
        guard k > 0, n >= k else { return }
        a.withUnsafeMutableBufferPointer { b in
            // Forward, so each element is read before it is overwritten.
            for i in 0..<(n - k) { b[i] = b[i + k] }
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
            + pendingGap.capacity * 4 + (pendingLikelihood.capacity + pendingAlpha.capacity) * 4 + 6 * 32
    }
}
