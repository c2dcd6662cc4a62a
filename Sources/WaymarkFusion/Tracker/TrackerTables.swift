import WaymarkCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What the tracker reads per region and gateway, computed once per site: the geometric part of
/// the expected RSSI, whether a wall separates them, and each monitored set's movement topology.
struct TrackerTables: Sendable {
    let gatewayCount: Int
    /// Region-major (r · gatewayCount + g): the mean of −10·log10(distance) over the region's core
    /// (`coreRadii`, `meanLogDistance`; see `EvidenceModel`).
    let logDistance: [Float]
    /// Region-major: 1 when gateway g is not in region r's room, else 0. A gateway on another floor
    /// never is; one that anchors no region is in the room of the nearest region if it lies within
    /// that region's radius (`Site.gatewayHomeRegions`). The room loss W that multiplies it is
    /// learned (`VenueCalibration`).
    let otherRoom: [Float]
    let evidence = EvidenceModel()
    let motion: MotionModel
    /// Per region: the topology of its monitored set (`FusionContext.monitoredSets`).
    let topology: [SetTopology]
    /// Fixed-lag smoothing: how many whole seconds the recorded history waits for later evidence.
    let lag: Int

    init(site: Site, parameters: FusionParameters, monitoredSets: [[Int32]]) {
        let G = site.gateways.count
        gatewayCount = G
        var ld = [Float](repeating: 0, count: site.regions.count * G)
        var other = [Float](repeating: 1, count: site.regions.count * G)
        let h2 = EvidenceModel.antennaHeightM * EvidenceModel.antennaHeightM
        var roomGateways: [String: Set<Int>] = [:]
        for (g, homes) in site.gatewayHomeRegions.enumerated() {
            for r in homes { roomGateways["\(site.regions[r].floor)/\(site.regions[r].room)", default: []].insert(g) }
        }
        let core = Self.coreRadii(site)
        for (r, region) in site.regions.enumerated() {
            let mine = roomGateways["\(region.floor)/\(region.room)"] ?? []
            for (g, gateway) in site.gateways.enumerated() {
                let dz = Double(region.floor - gateway.floor) * EvidenceModel.floorHeightM
                let flat = region.position.distance(to: gateway.position)
                ld[r * G + g] = Float(Self.meanLogDistance(centre: flat, radius: core[r], height2: dz * dz + h2))
                if gateway.floor == region.floor && mine.contains(g) { other[r * G + g] = 0 }
            }
        }
        logDistance = ld
        otherRoom = other
        motion = MotionModel(walkingSpeed: parameters.walkingSpeedMPS)
        topology = SetTopology.build(site: site, sets: monitoredSets, motion: motion)
        lag = max(0, Int(parameters.smoothingLagS.rounded()))
    }

    /// Each region's core: the disc around its position out to its radius, or to half the distance
    /// to the nearest other region on its floor if that is less. Beyond half-way to its nearest
    /// neighbour a region's disc reaches spots that are the neighbour's by the site's rule (a spot
    /// within several radii belongs to the region whose position is nearest); the core is the part
    /// that is the region's alone whatever radii were drawn. A device of the region is expected to
    /// read as from its core (`meanLogDistance` over it).
    ///
    /// So the tracker's picture of a region does not depend on how generously its radius was drawn,
    /// once it reaches half-way to its neighbours: the radius is Core Location's threshold for
    /// inside / outside, and drawn around a beacon out to the far end of its cell (an open plan, a
    /// corridor's end) it made every region look alike. On the real office floor the same readings
    /// scored 52.5 % exact with the cells' radii and 57.3 % with 3 m everywhere; 58.1 % with either
    /// since (docs/accuracy.md, "A region's core").
    static func coreRadii(_ site: Site) -> [Double] {
        site.regions.enumerated().map { r, region in
            var core = region.radiusM
            for (j, other) in site.regions.enumerated() where j != r && other.floor == region.floor {
                core = min(core, other.position.distance(to: region.position) / 2)
            }
            return core
        }
    }

    /// The mean of −10·log10(d) over a region's disc (radius `radius`, its centre `centre` metres
    /// from the gateway across the floor, `height2` the squared vertical offset): what the readings
    /// of a device somewhere in the region average to, in the model, up to the level. Equal-area
    /// rings × angles (8 × 16 points). Before 2026-12-07 the table held the log of the typical
    /// distance (the root mean square, centre distance and radius/√2 in quadrature), which lies
    /// below the mean by Jensen's inequality, most for a gateway inside its own region (0.8 dB at
    /// exponent 2 for a radius of 4 m): readings from a device inside the region then taught the
    /// venue's level that much hot (docs/accuracy.md, "The level from every second").
    static func meanLogDistance(centre: Double, radius: Double, height2: Double) -> Double {
        guard radius > 0 else { return -5 * log10(centre * centre + height2) }
        let rings = 8, angles = 16
        var sum = 0.0
        for i in 0..<rings {
            let rho = radius * ((Double(i) + 0.5) / Double(rings)).squareRoot()
            for j in 0..<angles {
                let theta = 2 * Double.pi * (Double(j) + 0.5) / Double(angles)
                let dx = centre + rho * cos(theta), dy = rho * sin(theta)
                sum += log10(dx * dx + dy * dy + height2)
            }
        }
        return -5 * sum / Double(rings * angles)
    }
}
