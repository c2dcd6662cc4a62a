import Foundation
public import WaymarkCore

/// The deterministic part of the radio physics (see `RadioParameters`): mean received power of an
/// advert by distance and floors, and the shadowing process's update rule.
public struct RadioModel: Sendable {
    public let parameters: RadioParameters

    public init(parameters: RadioParameters) { self.parameters = parameters }

    /// Mean RSSI (dBm) at the gateway for a device with true measured power `p1m` at `distanceM`
    /// (clamped below at 0.1 m) across `floors` storeys, with the gateway's bias.
    @inline(__always)
    public func meanRSSI(p1m: Double, distanceM: Double, floors: Int, gatewayBiasDB: Double) -> Double {
        p1m - 10 * parameters.pathLossExponent * log10(max(distanceM, 0.1))
            - parameters.floorLossDB * Double(floors) + gatewayBiasDB
    }

    /// 3-D distance between a device and a gateway on possibly different floors.
    @inline(__always)
    public func distance(_ a: Point, floor fa: Int, _ b: Point, floor fb: Int) -> Double {
        let dz = Double(fa - fb) * parameters.floorHeightM
        let dx = a.x - b.x, dy = a.y - b.y
        return (dx * dx + dy * dy + dz * dz).squareRoot()
    }

    /// Distance beyond which even a reading `margin` standard deviations above the mean of the
    /// strongest plausible device falls below the receiver's sensitivity: links farther away are
    /// not evaluated.
    public func audibleRange(strongestP1m: Double, strongestBiasDB: Double, margin: Double = 4.5) -> Double {
        let headroom = strongestP1m + strongestBiasDB + margin * parameters.totalSigmaDB - parameters.sensitivityDBm
        return pow(10, headroom / (10 * parameters.pathLossExponent))
    }

    /// Fitted profiles: one step of the shadowing as a Gauss–Markov process in time and in
    /// distance moved (correlation exp(−dt/τ − moved/L)), stationary standard deviation
    /// `shadowingSigmaDB`.
    @inline(__always)
    public func shadowingStep(_ previous: Double, dt: Double, moved: Double, normal: Double) -> Double {
        let sigma = parameters.shadowingSigmaDB
        let tau = parameters.shadowingCorrelationS
        let length = parameters.shadowingCorrelationM
        let exponent = (tau > 0 ? dt / tau : .infinity) + (length > 0 ? moved / length : .infinity)
        let rho = exp(-exponent)
        return rho * previous + sigma * (1 - rho * rho).squareRoot() * normal
    }

    /// Fitted profiles: probability that a gateway `distanceM` away receives an advert.
    @inline(__always)
    public func receptionProbability(distanceM: Double) -> Double {
        let p = parameters
        return (1 - p.packetLoss) * p.receptionP0 / (1 + exp((distanceM - p.receptionD50M) / p.receptionWidthM))
    }

    /// One AR(1) step of the shadowing over `dt` seconds: an Ornstein–Uhlenbeck process sampled
    /// exactly, so its stationary standard deviation is `shadowingSigmaDB` whatever the gaps.
    @inline(__always)
    public func shadowingStep(_ previous: Double, dt: Double, normal: Double) -> Double {
        let sigma = parameters.shadowingSigmaDB
        let tau = parameters.shadowingCorrelationS
        guard tau > 0 else { return sigma * normal }
        let rho = exp(-dt / tau)
        return rho * previous + sigma * (1 - rho * rho).squareRoot() * normal
    }
}
