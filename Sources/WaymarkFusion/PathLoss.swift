#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The log-distance path-loss model and the proximity buckets (DESIGN.md §3 "Distance", "Proximity").
struct PathLoss: Sendable {
    var exponent: Double
    var immediateM: Double
    var nearM: Double

    /// Distance in metres from a smoothed RSSI already corrected by the gateway offset.
    func distance(rssi: Double, measuredPower: Double) -> Double {
        pow10((measuredPower - rssi) / (10 * exponent))
    }

    func proximity(distance: Double) -> Proximity {
        distance < immediateM ? .immediate : distance < nearM ? .near : .far
    }
}

/// 10^x (the C library's `exp`; no Foundation).
@inline(__always)
func pow10(_ x: Double) -> Double { exp(x * 2.302585092994046) }

/// log10(x).
@inline(__always)
func logTen(_ x: Double) -> Double { log(x) / 2.302585092994046 }
