public import WaymarkCore

/// Everything a simulation run depends on besides the site: the period, the devices, how they move,
/// the radio physics and the faults to inject. Two runs with equal parameters and site produce
/// identical sightings and truth.
public struct SimulationParameters: Hashable, Sendable {
    /// Start of the simulated period, Unix seconds (default 2026-06-01T09:00:00Z).
    public var start: Double = 1_780_304_400
    /// Length of the simulated period in seconds.
    public var duration: Double = 3600
    /// Number of devices, including the stationary ones.
    public var deviceCount: Int = 100
    /// The one seed every random draw derives from.
    public var seed: UInt64 = 1
    public var movement = MovementParameters()
    public var radio = RadioParameters()
    public var arrivals: ArrivalProfile = .uniform
    public var faults = FaultPlan()

    public init() {}

    /// End of the simulated period, Unix seconds.
    public var end: Double { start + duration }
}

/// How devices move through the venue.
public struct MovementParameters: Hashable, Sendable {
    /// Each device walks at one speed drawn uniformly from this range (m/s).
    public var walkingSpeed: ClosedRange<Double> = 1.0...1.4
    /// Dwell at a destination region: log-normal with this median (s) and log-sd (heavy tail).
    public var dwellMedianS: Double = 90
    public var dwellSigma: Double = 0.8
    /// Mean number of destinations per visit to the venue (geometric, at least 1).
    public var meanStops: Double = 7
    /// Probability of lingering at a region the device only passes through (a corridor), and the
    /// median of that linger (log-normal, log-sd 0.6).
    public var lingerProbability: Double = 0.15
    public var lingerMedianS: Double = 15
    /// While dwelling, a device stands at points within this fraction of the region's radius from
    /// its position, moving to a new point every `repositionMeanS` seconds on average.
    public var dwellSpread: Double = 0.5
    public var repositionMeanS: Double = 40
    /// Fraction of devices that never move (staff tags at a desk, a forgotten badge): present for
    /// the whole period at one spot.
    public var stationaryFraction: Double = 0.02
    /// Visitors appear this far outside their entrance (on the side away from the venue) and walk
    /// in, and walk this far out again before they are gone, so their signal fades as it would
    /// rather than stopping at the door (m).
    public var outsideM: Double = 10

    public init() {}
}

/// When devices arrive over the simulated period.
public enum ArrivalProfile: Hashable, Sendable {
    /// Arrival times uniform over the period.
    case uniform
    /// Arrivals concentrated around `peak` (fraction of the period) with a normal spread of
    /// `width` (fraction of the period), truncated to the period: a midday rush.
    case peaked(peak: Double, width: Double)
    /// Everybody arrives at the start (useful for short tests).
    case atStart

    /// Parses `uniform`, `peaked` (peak at 40 % of the period, width 15 %), `peaked:P:W` or `start`.
    public init?(_ text: String) {
        let parts = text.split(separator: ":").map(String.init)
        switch parts.first {
        case "uniform" where parts.count == 1: self = .uniform
        case "start" where parts.count == 1: self = .atStart
        case "peaked" where parts.count == 1: self = .peaked(peak: 0.4, width: 0.15)
        case "peaked" where parts.count == 3:
            guard let p = Double(parts[1]), let w = Double(parts[2]), (0...1).contains(p), w > 0 else { return nil }
            self = .peaked(peak: p, width: w)
        default: return nil
        }
    }

    /// An arrival offset in [0, duration).
    func draw(duration: Double, rng: inout SimulationRandom) -> Double {
        switch self {
        case .uniform: return rng.uniform() * duration
        case .atStart: return rng.uniform() * min(duration, 5)
        case .peaked(let peak, let width):
            for _ in 0..<64 {
                let f = rng.gaussian(mean: peak, sd: width)
                if f >= 0 && f < 1 { return f * duration }
            }
            return peak * duration
        }
    }
}

/// The radio physics: what a gateway hears from a device.
///
/// Mean RSSI at distance d (metres, 3-D with `floorHeightM` per storey) is
/// `P1m − 10·n·log10(d) − floorLoss·|Δfloor| + gatewayBias`, where P1m is the device's true measured
/// power (the advertised value plus a per-device error), and gatewayBias is the negative of the
/// site's `rssi_offset_db` (a perfectly calibrated site) plus a per-gateway calibration error.
/// On top: AR(1) log-normal shadowing per (device, gateway) with standard deviation
/// `shadowingSigmaDB` and correlation time `shadowingCorrelationS`, independent per-packet fading
/// `packetJitterDB`, random packet loss, and a cut-off below `sensitivityDBm`.
///
/// That is the `ideal` profile (`RadioParameters()`). The fitted profiles (`RadioParameters(profile:)`; docs/radio-model.md) generate differently: the shadowing also decorrelates
/// with the distance the device moved (`shadowingCorrelationM`), fading adds deep fades
/// (`deepFadeProbability`, `deepFadeMeanDB`), and reception falls with distance
/// (`receptionP0`, `receptionD50M`, `receptionWidthM`) on top of `packetLoss`.
public struct RadioParameters: Hashable, Sendable {
    /// Which generator: `.ideal` is the original model, byte for byte; the others use the fields
    /// documented as "fitted profiles" below.
    public var profile: RadioProfile = .ideal
    public var pathLossExponent: Double = 2.5
    /// Advertised measured power at 1 m (the iBeacon tx byte), dBm.
    public var advertisedPowerDBm: Double = -59
    /// Standard deviation of a device's true measured power around the advertised value (dB).
    public var measuredPowerSpreadDB: Double = 2
    /// Standard deviation of a gateway's calibration error left after its `rssi_offset_db` (dB).
    public var gatewayOffsetSpreadDB: Double = 1.5
    public var shadowingSigmaDB: Double = 5
    /// Correlation time τ of the shadowing: correlation exp(−Δt/τ) between samples Δt apart (s).
    public var shadowingCorrelationS: Double = 3
    /// Independent per-packet fading (different advertising channels, small movements), dB.
    public var packetJitterDB: Double = 2
    /// Each device advertises at one interval drawn uniformly from this range (s); BLE adds a
    /// random 0–10 ms delay to every advert.
    public var advertisingInterval: ClosedRange<Double> = 0.1...1.0
    /// Probability that a gateway misses an advert it could hear (scan duty cycle, collisions).
    public var packetLoss: Double = 0.15
    /// Adverts received below this level are not reported (dBm).
    public var sensitivityDBm: Double = -95
    /// Extra loss per storey between device and gateway (dB) and storey height (m).
    public var floorLossDB: Double = 15
    public var floorHeightM: Double = 4

    /// Fitted profiles: correlation distance L of the shadowing; between two readings of a link
    /// the correlation is exp(−Δt/τ − Δs/L) for Δs metres moved (m).
    public var shadowingCorrelationM: Double = .infinity
    /// Fitted profiles: probability that a reading carries a deep fade, an extra loss drawn from an
    /// exponential distribution with mean `deepFadeMeanDB` (the fading is re-centred to mean 0).
    public var deepFadeProbability: Double = 0
    public var deepFadeMeanDB: Double = 0
    /// Fitted profiles: probability that a gateway receives an advert at distance d (m),
    /// `receptionP0 / (1 + exp((d − receptionD50M) / receptionWidthM))`.
    public var receptionP0: Double = 1
    public var receptionD50M: Double = 1e9
    public var receptionWidthM: Double = 1
    /// Fitted profiles: how much higher the gateways' antennas are than the tags (m), part of the
    /// 3-D distance (gateways on walls or ceilings, tags carried at chest height).
    public var antennaHeightM: Double = 0
    /// Fitted profiles: extra loss (dB) when the gateway is not anchored at the device's room,
    /// taken as the region whose position is nearest on its floor (a wall in between). Zero for
    /// an open space (site `simulation: { walls: false }`).
    public var wallLossDB: Double = 0

    public init() {}

    /// Standard deviation of the total random part of one reading.
    var totalSigmaDB: Double {
        (shadowingSigmaDB * shadowingSigmaDB + packetJitterDB * packetJitterDB).squareRoot()
    }
}

/// Faults injected on request.
public struct FaultPlan: Hashable, Sendable {
    /// A gateway that hears nothing between `from` and `to` (seconds after the start).
    public struct Outage: Hashable, Sendable {
        public var gateway: String
        public var from: Double
        public var to: Double
        public init(gateway: String, from: Double, to: Double) { self.gateway = gateway; self.from = from; self.to = to }
    }

    public var outages: [Outage] = []
    /// Gateway id → seconds its clock is ahead (negative: behind). Reported times are shifted;
    /// the truth is not.
    public var clockSkewS: [String: Double] = [:]
    /// Probability that a batch is delivered twice, and that a batch is delivered after the next
    /// batch of the same gateway.
    public var duplicateRate: Double = 0
    public var reorderRate: Double = 0
    /// Length of a gateway's batching window (s), as the edge agent's default.
    public var batchWindowS: Double = 1
    /// Every gateway sends a batch for every window while it is up, empty when it heard nothing,
    /// as waymark-edge does on a live radio (`--empty-windows`); otherwise only windows with
    /// sightings, as a replaying edge does.
    public var emptyWindows = false

    public init() {}

    public var changesBatches: Bool { duplicateRate > 0 || reorderRate > 0 }
}
