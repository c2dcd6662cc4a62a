public import WaymarkCore

/// One simulated device: its identity, where it goes, and its radio.
public struct SimulatedDevice: Hashable, Sendable {
    public var id: DeviceID
    public var trajectory: Trajectory
    public var isStationary: Bool
    /// Seconds between adverts (before BLE's random 0–10 ms delay).
    public var advertisingInterval: Double
    /// The true RSSI at 1 m, which differs from the advertised value by the device's error.
    public var measuredPowerDBm: Double
    /// The advertised measured power (the iBeacon tx byte), as reported in sightings.
    public var advertisedPowerDBm: Double

    public init(id: DeviceID, trajectory: Trajectory, isStationary: Bool, advertisingInterval: Double,
                measuredPowerDBm: Double, advertisedPowerDBm: Double) {
        self.id = id
        self.trajectory = trajectory
        self.isStationary = isStationary
        self.advertisingInterval = advertisingInterval
        self.measuredPowerDBm = measuredPowerDBm
        self.advertisedPowerDBm = advertisedPowerDBm
    }
}

/// A fully drawn simulation: the devices with their trajectories and radios, the gateways' true
/// biases and the fault schedule. Everything random is drawn here or from per-device streams
/// derived from the seed, so equal inputs give equal scenarios.
public struct Scenario: Sendable {
    public let site: Site
    public let parameters: SimulationParameters
    public let devices: [SimulatedDevice]
    /// Per gateway index: the dB the gateway adds to the true received power.
    public let gatewayBiasDB: [Double]
    /// Per gateway index: seconds its clock is ahead.
    public let clockSkewS: [Double]
    /// Per gateway index: absolute periods (Unix seconds) during which it hears nothing.
    public let outages: [[ClosedRange<Double>]]

    /// Draws a scenario: devices, their trajectories and radios from the seed. Throws
    /// `SimulationError` when the parameters name unknown gateways or cannot be simulated.
    public init(site: Site, parameters p: SimulationParameters) throws(SimulationError) {
        try Self.check(site: site, parameters: p)
        let master = SimulationRandom(seed: p.seed)
        let planner = MovementPlanner(site: site, movement: p.movement)
        let identity = site.tracking.ibeacon.first
        let iv = p.radio.advertisingInterval
        var devices: [SimulatedDevice] = []
        devices.reserveCapacity(p.deviceCount)
        for i in 0..<p.deviceCount {
            var rng = master.derived(UInt64(i))
            let stationary = rng.chance(p.movement.stationaryFraction)
            let trajectory = stationary
                ? planner.stationary(from: p.start, to: p.end, rng: &rng)
                : planner.visitor(arrival: p.start + p.arrivals.draw(duration: p.duration, rng: &rng), end: p.end, rng: &rng)
            devices.append(SimulatedDevice(
                id: Self.deviceID(index: i, identity: identity, rng: &rng),
                trajectory: trajectory,
                isStationary: stationary,
                advertisingInterval: rng.uniform(iv.lowerBound, iv.upperBound),
                measuredPowerDBm: p.radio.advertisedPowerDBm + p.radio.measuredPowerSpreadDB * rng.gaussian(),
                advertisedPowerDBm: p.radio.advertisedPowerDBm))
        }
        try self.init(site: site, parameters: p, devices: devices)
    }

    /// A scenario with the given devices (tests, hand-built experiments); gateway biases and
    /// faults still come from the parameters and seed. `parameters.deviceCount` is ignored.
    public init(site: Site, parameters p: SimulationParameters, devices: [SimulatedDevice]) throws(SimulationError) {
        try Self.check(site: site, parameters: p)
        self.site = site
        self.parameters = p
        self.devices = devices
        var gatewayRNG = SimulationRandom(seed: p.seed).derived(0xFFFF_0001)
        gatewayBiasDB = site.gateways.map { -$0.rssiOffsetDB + p.radio.gatewayOffsetSpreadDB * gatewayRNG.gaussian() }
        var skew = Array(repeating: 0.0, count: site.gateways.count)
        for (gid, s) in p.faults.clockSkewS {
            guard let g = site.gatewayIndex(gid) else { throw .unknownGateway(gid, known: site.gateways.map(\.id)) }
            skew[g] = s
        }
        clockSkewS = skew
        var down = Array(repeating: [ClosedRange<Double>](), count: site.gateways.count)
        for o in p.faults.outages {
            guard let g = site.gatewayIndex(o.gateway) else { throw .unknownGateway(o.gateway, known: site.gateways.map(\.id)) }
            guard o.to > o.from else { throw .invalid("outage of \(o.gateway) must end after it starts") }
            down[g].append((p.start + o.from)...(p.start + o.to))
        }
        outages = down
    }

    static func check(site: Site, parameters p: SimulationParameters) throws(SimulationError) {
        guard p.deviceCount >= 0 else { throw .invalid("devices must be 0 or more, got \(p.deviceCount)") }
        guard p.duration > 0 && p.duration.isFinite else { throw .invalid("duration must be positive, got \(p.duration) s") }
        guard !site.regions.isEmpty, !site.gateways.isEmpty else { throw .invalid("the site has no regions or no gateways") }
        let iv = p.radio.advertisingInterval
        guard iv.lowerBound >= 0.02 && iv.upperBound <= 10 else {
            throw .invalid("advertising interval must lie within 0.02–10 s, got \(iv.lowerBound)–\(iv.upperBound) s")
        }
        guard (0..<1).contains(p.radio.packetLoss) else { throw .invalid("packet loss must be in [0, 1), got \(p.radio.packetLoss)") }
    }

    /// `ibeacon:<uuid>:<major>:<minor>` under the site's first tracked iBeacon identity (its major
    /// and minor kept when it fixes them), else a locally administered `mac:` address.
    static func deviceID(index: Int, identity: IBeaconIdentity?, rng: inout SimulationRandom) -> DeviceID {
        if let identity {
            let major = identity.major ?? UInt16(truncatingIfNeeded: 1000 + index / 60000)
            let minor = identity.minor.map { _ in UInt16(truncatingIfNeeded: index) }
                ?? UInt16(truncatingIfNeeded: 1 + index % 60000)
            if identity.minor == nil || index == 0 { return .ibeacon(uuid: identity.uuid, major: major, minor: minor) }
        }
        var bytes = (0..<6).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        bytes[0] = (bytes[0] | 0x02) & 0xFE  // locally administered, unicast
        bytes[4] = UInt8(truncatingIfNeeded: index >> 8)
        bytes[5] = UInt8(truncatingIfNeeded: index)
        return .mac(bytes)
    }

    /// True visits of every device, sorted by device then time.
    public func truth() -> [TrueVisit] {
        let gt = GroundTruth(site: site)
        return devices.indices.flatMap { gt.visits(device: $0, trajectory: devices[$0].trajectory) }
    }
}

/// Why a simulation cannot run.
public enum SimulationError: Error, CustomStringConvertible, Equatable {
    case invalid(String)
    case unknownGateway(String, known: [String])

    public var description: String {
        switch self {
        case .invalid(let m): m
        case .unknownGateway(let g, let known):
            "unknown gateway '\(g)' in a fault option; the site's gateways are: \(known.joined(separator: ", "))"
        }
    }
}
