import Foundation
public import WaymarkCore

/// Plans one device's trajectory through a site: enter at an entrance, walk the beacon graph along
/// its edges to a series of destinations (dwelling at each, sometimes lingering in regions passed
/// on the way), then walk to an entrance and leave — or stay where it is, for a stationary device.
public struct MovementPlanner: Sendable {
    public let site: Site
    public let movement: MovementParameters
    /// Regions a visitor may choose as a destination: every region that is not an entrance.
    private let destinations: [Int]

    public init(site: Site, movement: MovementParameters) {
        self.site = site
        self.movement = movement
        let entrances = Set(site.entranceIndices)
        let rest = site.regions.indices.filter { !entrances.contains($0) }
        self.destinations = rest.isEmpty ? Array(site.regions.indices) : rest
    }

    /// A device that stays at one spot near a random region for the whole period.
    public func stationary(from start: Double, to end: Double, rng: inout SimulationRandom) -> Trajectory {
        let region = rng.index(site.regions.count)
        let spot = spot(in: region, rng: &rng)
        let floor = site.regions[region].floor
        return Trajectory(waypoints: [.init(time: start, position: spot, floor: floor),
                                      .init(time: end, position: spot, floor: floor)])
    }

    /// A visitor who arrives at `arrival` and leaves when done or when the period ends at `end`.
    public func visitor(arrival: Double, end: Double, rng: inout SimulationRandom) -> Trajectory {
        let speed = rng.uniform(movement.walkingSpeed.lowerBound, movement.walkingSpeed.upperBound)
        let entrances = site.entranceIndices
        var current = entrances[rng.index(entrances.count)]
        let door = site.regions[current]
        var walk = Walk(
            trajectory: Trajectory(waypoints: [.init(time: arrival, position: outside(current), floor: door.floor)]),
            end: end)
        walk.move(to: door.position, floor: door.floor, duration: movement.outsideM / speed)

        // Geometric number of stops with the configured mean, at least one.
        let continueP = max(0, 1 - 1 / max(movement.meanStops, 1))
        var stops = 1
        while rng.chance(continueP) && stops < 200 { stops += 1 }

        for _ in 0..<stops where !walk.isOver {
            var destination = destinations[rng.index(destinations.count)]
            if destination == current && destinations.count > 1 {
                destination = destinations[(destinations.firstIndex(of: destination)! + 1) % destinations.count]
            }
            guard let path = site.graph.shortestPath(from: current, to: destination) else { continue }
            walkPath(path.regions, speed: speed, linger: true, walk: &walk, rng: &rng)
            current = destination
            dwell(at: current, duration: rng.logNormal(median: movement.dwellMedianS, sigma: movement.dwellSigma),
                  speed: speed, walk: &walk, rng: &rng)
        }
        if !walk.isOver {
            // Leave by the nearest entrance by walking distance (ties: the first listed).
            let exits = entrances.compactMap { e in site.graph.shortestPath(from: current, to: e) }
            if let best = exits.min(by: { $0.lengthM < $1.lengthM }), let door = best.regions.last {
                walkPath(best.regions, speed: speed, linger: false, walk: &walk, rng: &rng)
                walk.move(to: outside(door), floor: site.regions[door].floor, duration: movement.outsideM / speed)
            }
        }
        return walk.trajectory
    }

    /// A trajectory under construction, cut off at the end of the period.
    struct Walk {
        var trajectory: Trajectory
        let end: Double
        var time: Double { trajectory.departure }
        var isOver: Bool { time >= end }
        var here: Trajectory.Waypoint { trajectory.waypoints[trajectory.waypoints.count - 1] }

        /// Moves to `position` arriving `duration` seconds from now (truncated at the end).
        mutating func move(to position: Point, floor: Int, duration: Double) {
            guard !isOver else { return }
            let from = here
            let arrive = from.time + max(duration, 0)
            if arrive <= end {
                trajectory.append(.init(time: arrive, position: position, floor: floor))
            } else {
                let f = (end - from.time) / (arrive - from.time)
                let p = Point(x: from.position.x + (position.x - from.position.x) * f,
                              y: from.position.y + (position.y - from.position.y) * f)
                trajectory.append(.init(time: end, position: p, floor: f < 0.5 ? from.floor : floor))
            }
        }

        mutating func stay(_ duration: Double) {
            move(to: here.position, floor: here.floor, duration: duration)
        }
    }

    /// Walks from the current spot through `path` (region indices, the first being where the
    /// device is), taking each edge's length at `speed`.
    func walkPath(_ path: [Int], speed: Double, linger: Bool, walk: inout Walk, rng: inout SimulationRandom) {
        guard path.count > 1 else { return }
        for i in 1..<path.count where !walk.isOver {
            let a = path[i - 1], b = path[i]
            let target = site.regions[b]
            let edge = site.graph.adjacency[a].first { $0.region == b }?.lengthM
                ?? site.regions[a].position.distance(to: target.position)
            // Scale the edge length by how far the device actually is from the edge's start.
            let centres = site.regions[a].position.distance(to: target.position)
            let actual = walk.here.position.distance(to: target.position)
            let length = centres > 0.5 ? edge * actual / centres : max(edge, actual)
            walk.move(to: target.position, floor: target.floor, duration: length / speed)
            if linger && i < path.count - 1 && rng.chance(movement.lingerProbability) {
                dwell(at: b, duration: rng.logNormal(median: movement.lingerMedianS, sigma: 0.6),
                      speed: speed, walk: &walk, rng: &rng)
            }
        }
    }

    /// Stays in `region` for `duration`, standing at random spots near its position.
    func dwell(at region: Int, duration: Double, speed: Double, walk: inout Walk, rng: inout SimulationRandom) {
        let until = walk.time + duration
        let floor = site.regions[region].floor
        while !walk.isOver && walk.time < until {
            let spot = spot(in: region, rng: &rng)
            // Stroll to the next spot at 60 % of walking speed, if there is time to get there.
            let step = walk.here.position.distance(to: spot) / (speed * 0.6)
            if step < until - walk.time { walk.move(to: spot, floor: floor, duration: step) }
            let stand = min(rng.exponential(mean: movement.repositionMeanS), until - walk.time)
            if stand > 0 { walk.stay(stand) }
        }
    }

    /// The point `outsideM` beyond an entrance, on the side away from the regions it connects to.
    func outside(_ entrance: Int) -> Point {
        let here = site.regions[entrance].position
        let neighbours = site.graph.adjacency[entrance].map { site.regions[$0.region].position }
        var dx = 1.0, dy = 0.0
        if !neighbours.isEmpty {
            let cx = neighbours.map(\.x).reduce(0, +) / Double(neighbours.count)
            let cy = neighbours.map(\.y).reduce(0, +) / Double(neighbours.count)
            let norm = ((here.x - cx) * (here.x - cx) + (here.y - cy) * (here.y - cy)).squareRoot()
            if norm > 1e-6 { dx = (here.x - cx) / norm; dy = (here.y - cy) / norm }
        }
        return Point(x: here.x + dx * movement.outsideM, y: here.y + dy * movement.outsideM)
    }

    /// A uniformly random point within `dwellSpread × radius` of the region's position.
    func spot(in region: Int, rng: inout SimulationRandom) -> Point {
        let r = site.regions[region]
        let rho = r.radiusM * movement.dwellSpread * rng.uniform().squareRoot()
        let theta = rng.uniform() * 2 * Double.pi
        return Point(x: r.position.x + rho * cos(theta), y: r.position.y + rho * sin(theta))
    }
}
