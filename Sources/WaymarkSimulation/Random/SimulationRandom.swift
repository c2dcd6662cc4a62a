import Foundation

/// The simulator's own seeded pseudo-random generator: xoshiro256** seeded through SplitMix64.
///
/// Every random draw of a simulation run comes from generators derived from one seed, so a run is
/// reproducible bit for bit. Independent streams (one per device, one per radio link) are derived
/// with `derived(_:)`, so adding a device does not perturb the draws of the others.
public struct SimulationRandom: RandomNumberGenerator, Sendable {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64
    /// A second normal deviate from the last Box–Muller draw, used by the next `gaussian()` call.
    private var spareNormal: Double?

    /// A generator whose state is expanded from `seed` with SplitMix64 (never all-zero).
    public init(seed: UInt64) {
        var sm = seed
        s0 = Self.splitMix(&sm)
        s1 = Self.splitMix(&sm)
        s2 = Self.splitMix(&sm)
        s3 = Self.splitMix(&sm)
        if s0 | s1 | s2 | s3 == 0 { s0 = 0x9E37_79B9_7F4A_7C15 }
    }

    /// An independent stream for `stream` (a device index, a link number …) derived from this
    /// generator's current state without advancing it.
    public func derived(_ stream: UInt64) -> SimulationRandom {
        var mix = s0 ^ (stream &* 0xD1B5_4A32_D192_ED03) ^ s3.rotatedLeft(17)
        return SimulationRandom(seed: Self.splitMix(&mix) ^ stream)
    }

    static func splitMix(_ state: inout UInt64) -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func next() -> UInt64 {
        let result = (s1 &* 5).rotatedLeft(7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = s3.rotatedLeft(45)
        return result
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    @inline(__always)
    public mutating func uniform() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// Uniform in [low, high).
    public mutating func uniform(_ low: Double, _ high: Double) -> Double {
        low + (high - low) * uniform()
    }

    /// True with probability `p`.
    @inline(__always)
    public mutating func chance(_ p: Double) -> Bool { uniform() < p }

    /// A standard normal deviate (Box–Muller, polar form; the second deviate is kept for the next
    /// call).
    public mutating func gaussian() -> Double {
        if let spare = spareNormal {
            spareNormal = nil
            return spare
        }
        while true {
            let u = 2 * uniform() - 1
            let v = 2 * uniform() - 1
            let s = u * u + v * v
            if s > 0 && s < 1 {
                let f = (-2 * log(s) / s).squareRoot()
                spareNormal = v * f
                return u * f
            }
        }
    }

    /// Normal with the given mean and standard deviation.
    public mutating func gaussian(mean: Double, sd: Double) -> Double { mean + sd * gaussian() }

    /// Log-normal: exp(N(log(median), sigma²)); heavy-tailed for sigma around 1.
    public mutating func logNormal(median: Double, sigma: Double) -> Double {
        median * exp(sigma * gaussian())
    }

    /// Exponential with the given mean.
    public mutating func exponential(mean: Double) -> Double {
        -mean * log(1 - uniform())
    }

    /// A uniformly chosen index below `count` (which must be positive).
    public mutating func index(_ count: Int) -> Int {
        Int(uniform() * Double(count)) % count
    }
}

extension UInt64 {
    @inline(__always)
    func rotatedLeft(_ k: UInt64) -> UInt64 { (self << k) | (self >> (64 - k)) }
}
