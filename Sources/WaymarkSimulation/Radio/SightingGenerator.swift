import WaymarkCore

/// One advert heard by one gateway: what a gateway's scanner reports.
public struct SimulatedSighting: Hashable, Sendable {
    /// Reception time by the gateway's clock (true time plus the gateway's clock skew), Unix s.
    public var time: Double
    /// Index into `Scenario.devices` and `Site.gateways`.
    public var device: Int32
    public var gateway: Int32
    /// Received power, whole dBm as scanners report it.
    public var rssi: Int16

    public init(time: Double, device: Int32, gateway: Int32, rssi: Int16) {
        self.time = time
        self.device = device
        self.gateway = gateway
        self.rssi = rssi
    }
}

/// Generates the sightings of a scenario in time order, one chunk of simulated time per call, so
/// arbitrarily long runs stream in bounded memory.
///
/// Every device advertises every `advertisingInterval` plus BLE's random 0–10 ms delay; each
/// gateway within audible range hears each advert unless it is lost, it is offline, or the
/// received power (mean by `RadioModel`, plus AR(1) shadowing per link, plus per-packet fading)
/// falls below the sensitivity.
public struct SightingGenerator: Sendable {
    public let scenario: Scenario
    public let chunkS: Double
    private let model: RadioModel
    private let rangeM: Double

    private var chunkStart: Double
    private var nextAdvert: [Double]
    private var cursors: [Int]
    private var rngs: [SimulationRandom]
    /// Per (device, gateway) link: shadowing value and the time it was last drawn (−∞: never).
    private var shadow: [Double]
    private var shadowTime: [Double]
    /// Fitted profiles: where the device was when each link's shadowing was last drawn.
    private var shadowX: [Double]
    private var shadowY: [Double]
    /// Fitted profiles with walls: for each gateway, whether it is in region r's room (anchored at
    /// r or at another region of the same `room` on the same floor).
    private let gatewayInRegion: [[Bool]]
    /// Sightings generated but not yet safe to emit because a skewed clock may still produce
    /// earlier reported times.
    private var pending: [SimulatedSighting] = []
    private let emitLag: Double
    private var finished = false

    public init(scenario: Scenario, chunkS: Double = 10) {
        self.scenario = scenario
        self.chunkS = chunkS
        let radio = scenario.parameters.radio
        model = RadioModel(parameters: radio)
        let strongest = scenario.devices.map(\.measuredPowerDBm).max() ?? radio.advertisedPowerDBm
        rangeM = model.audibleRange(strongestP1m: strongest, strongestBiasDB: scenario.gatewayBiasDB.max() ?? 0)
        chunkStart = scenario.parameters.start
        let master = SimulationRandom(seed: scenario.parameters.seed ^ 0x5157_4E41_4C53)
        var streams = scenario.devices.indices.map { master.derived(UInt64($0)) }
        var first: [Double] = []
        for i in scenario.devices.indices {
            let dev = scenario.devices[i]
            first.append(dev.trajectory.arrival + dev.advertisingInterval * streams[i].uniform())
        }
        rngs = streams
        nextAdvert = first
        cursors = Array(repeating: 0, count: scenario.devices.count)
        let links = scenario.devices.count * scenario.site.gateways.count
        shadow = Array(repeating: 0, count: links)
        shadowTime = Array(repeating: -.infinity, count: links)
        shadowX = Array(repeating: 0, count: links)
        shadowY = Array(repeating: 0, count: links)
        let site = scenario.site
        let homes = site.gatewayHomeRegions
        gatewayInRegion = site.gateways.indices.map { g in
            site.regions.indices.map { r in
                homes[g].contains { other in
                    site.regions[other].room == site.regions[r].room && site.regions[other].floor == site.regions[r].floor
                }
            }
        }
        emitLag = max(0, -(scenario.clockSkewS.min() ?? 0))
    }

    /// Fraction of the simulated period generated so far.
    public var progress: Double {
        min(1, (chunkStart - scenario.parameters.start) / scenario.parameters.duration)
    }

    /// The next chunk of sightings sorted by reported time (possibly empty), or nil when the
    /// period is over and everything has been returned.
    public mutating func next() -> [SimulatedSighting]? {
        if finished { return nil }
        let end = scenario.parameters.end
        let a = chunkStart
        let b = min(a + chunkS, end)
        let ideal = scenario.parameters.radio.profile == .ideal
        for d in scenario.devices.indices {
            if ideal { generate(device: d, from: a, to: b) } else { generateFitted(device: d, from: a, to: b) }
        }
        chunkStart = b
        pending.sort { ($0.time, $0.gateway, $0.device) < ($1.time, $1.gateway, $1.device) }
        if b >= end {
            finished = true
            defer { pending = [] }
            return pending
        }
        // Later chunks can still report times down to b − emitLag (a clock that is behind).
        let threshold = b - emitLag
        let cut = pending.firstIndex { $0.time >= threshold } ?? pending.count
        let out = Array(pending[..<cut])
        pending.removeFirst(cut)
        return out
    }

    private mutating func generate(device d: Int, from a: Double, to b: Double) {
        let dev = scenario.devices[d]
        let traj = dev.trajectory
        guard traj.departure >= a, traj.arrival < b else { return }
        let site = scenario.site
        let gateways = site.gateways
        let radio = scenario.parameters.radio
        // Gateways that can hear the device at any time in this chunk.
        let start = traj.location(at: max(a, traj.arrival), cursor: &cursors[d])
        let reach = rangeM + chunkS * 3
        let candidates = gateways.indices.filter { g in
            model.distance(start.position, floor: start.floor, gateways[g].position, floor: gateways[g].floor) <= reach
        }
        let base = d * gateways.count
        let range2 = rangeM * rangeM
        var t = nextAdvert[d]
        var rng = rngs[d]
        while t < b && t <= traj.departure {
            let here = traj.location(at: t, cursor: &cursors[d])
            for g in candidates {
                let gw = gateways[g]
                let dz = Double(here.floor - gw.floor) * radio.floorHeightM
                let dx = here.position.x - gw.position.x, dy = here.position.y - gw.position.y
                let dist2 = dx * dx + dy * dy + dz * dz
                if dist2 > range2 { continue }
                if rng.chance(radio.packetLoss) { continue }
                if !scenario.outages[g].isEmpty && scenario.outages[g].contains(where: { $0.contains(t) }) { continue }
                let link = base + g
                let s = shadowTime[link] == -.infinity
                    ? radio.shadowingSigmaDB * rng.gaussian()
                    : model.shadowingStep(shadow[link], dt: t - shadowTime[link], normal: rng.gaussian())
                shadow[link] = s
                shadowTime[link] = t
                let mean = model.meanRSSI(
                    p1m: dev.measuredPowerDBm, distanceM: dist2.squareRoot(),
                    floors: abs(here.floor - gw.floor), gatewayBiasDB: scenario.gatewayBiasDB[g])
                let rssi = (mean + s + radio.packetJitterDB * rng.gaussian()).rounded()
                if rssi < radio.sensitivityDBm { continue }
                pending.append(SimulatedSighting(
                    time: t + scenario.clockSkewS[g], device: Int32(d), gateway: Int32(g), rssi: Int16(max(rssi, -127))))
            }
            t += dev.advertisingInterval + 0.01 * rng.uniform()
        }
        nextAdvert[d] = t
        rngs[d] = rng
    }

    /// The fitted profiles' generator (`RadioParameters(profile:)`): reception falls with
    /// distance, the shadowing decorrelates with distance moved as well as time, and fading adds
    /// deep fades. Same candidates, outages, clock skew and advert timing as `generate`.
    private mutating func generateFitted(device d: Int, from a: Double, to b: Double) {
        let dev = scenario.devices[d]
        let traj = dev.trajectory
        guard traj.departure >= a, traj.arrival < b else { return }
        let gateways = scenario.site.gateways
        let radio = scenario.parameters.radio
        let start = traj.location(at: max(a, traj.arrival), cursor: &cursors[d])
        let reach = rangeM + chunkS * 3
        let candidates = gateways.indices.filter { g in
            model.distance(start.position, floor: start.floor, gateways[g].position, floor: gateways[g].floor) <= reach
        }
        let base = d * gateways.count
        let range2 = rangeM * rangeM
        let fadeP = radio.deepFadeProbability, fadeMean = radio.deepFadeMeanDB
        var t = nextAdvert[d]
        var rng = rngs[d]
        let regions = scenario.site.regions
        let walls = radio.wallLossDB
        while t < b && t <= traj.departure {
            let here = traj.location(at: t, cursor: &cursors[d])
            // The device's room: the region nearest on its floor.
            var room = -1
            if walls != 0 {
                var best = Double.infinity
                for (r, region) in regions.enumerated() where region.floor == here.floor {
                    let rx = region.position.x - here.position.x, ry = region.position.y - here.position.y
                    let d2 = rx * rx + ry * ry
                    if d2 < best { best = d2; room = r }
                }
            }
            for g in candidates {
                let gw = gateways[g]
                let dz = Double(here.floor - gw.floor) * radio.floorHeightM - radio.antennaHeightM
                let dx = here.position.x - gw.position.x, dy = here.position.y - gw.position.y
                let dist2 = dx * dx + dy * dy + dz * dz
                if dist2 > range2 { continue }
                let dist = dist2.squareRoot()
                if !rng.chance(model.receptionProbability(distanceM: dist)) { continue }
                if !scenario.outages[g].isEmpty && scenario.outages[g].contains(where: { $0.contains(t) }) { continue }
                let link = base + g
                let s: Double
                if shadowTime[link] == -.infinity {
                    s = radio.shadowingSigmaDB * rng.gaussian()
                } else {
                    let mx = here.position.x - shadowX[link], my = here.position.y - shadowY[link]
                    s = model.shadowingStep(shadow[link], dt: t - shadowTime[link], moved: (mx * mx + my * my).squareRoot(),
                                            normal: rng.gaussian())
                }
                shadow[link] = s
                shadowTime[link] = t
                shadowX[link] = here.position.x
                shadowY[link] = here.position.y
                var fading = radio.packetJitterDB * rng.gaussian()
                if fadeP > 0 {
                    fading += fadeP * fadeMean
                    if rng.chance(fadeP) { fading -= rng.exponential(mean: fadeMean) }
                }
                let mean = model.meanRSSI(
                    p1m: dev.measuredPowerDBm, distanceM: dist,
                    floors: abs(here.floor - gw.floor), gatewayBiasDB: scenario.gatewayBiasDB[g])
                let wall = walls != 0 && (room < 0 || !gatewayInRegion[g][room]) ? walls : 0
                let rssi = (mean - wall + s + fading).rounded()
                if rssi < radio.sensitivityDBm { continue }
                pending.append(SimulatedSighting(
                    time: t + scenario.clockSkewS[g], device: Int32(d), gateway: Int32(g), rssi: Int16(max(rssi, -127))))
            }
            t += dev.advertisingInterval + 0.01 * rng.uniform()
        }
        nextAdvert[d] = t
        rngs[d] = rng
    }
}
