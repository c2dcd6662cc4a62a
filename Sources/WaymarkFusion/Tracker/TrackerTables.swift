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
    /// Region-major (r · gatewayCount + g): the mean of −10·log10(distance) over the region
    /// (`meanLogDistance`; see `EvidenceModel`), over its own part where other regions' radii
    /// overlap it (`ownedPoints`).
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
        for (r, region) in site.regions.enumerated() {
            let mine = roomGateways["\(region.floor)/\(region.room)"] ?? []
            // The region's own part of its disc, when others overlap it.
            let area = Self.ownedPoints(of: r, in: site)
            for (g, gateway) in site.gateways.enumerated() {
                let dz = Double(region.floor - gateway.floor) * EvidenceModel.floorHeightM
                if let area {
                    var sum = 0.0
                    for p in area {
                        let d = p.distance(to: gateway.position)
                        sum += log10(d * d + dz * dz + h2)
                    }
                    ld[r * G + g] = Float(-5 * sum / Double(area.count))
                } else {
                    let flat = region.position.distance(to: gateway.position)
                    ld[r * G + g] = Float(Self.meanLogDistance(centre: flat, radius: region.radiusM, height2: dz * dz + h2))
                }
                if gateway.floor == region.floor && mine.contains(g) { other[r * G + g] = 0 }
            }
        }
        logDistance = ld
        otherRoom = other
        motion = MotionModel(walkingSpeed: parameters.walkingSpeedMPS)
        topology = SetTopology.build(site: site, sets: monitoredSets, motion: motion)
        lag = max(0, Int(parameters.smoothingLagS.rounded()))
    }

    /// The part of region `r`'s disc that is the region's by the site's rule when radii overlap
    /// (as `waymark simulate` defines the truth, and as docs/site-file.md says): a spot within
    /// several regions' radii belongs to the one whose position is nearest. As equal-area points
    /// (16 rings × 32 angles); nil when no other region on the floor takes any of the disc (the
    /// mean over the whole disc, `meanLogDistance`, is then the region's), or takes all of it (a
    /// region drawn entirely inside a nearer one's: the whole disc is kept).
    ///
    /// A region drawn, as Core Location draws a beacon region, around its gateway with a radius
    /// that reaches the far end of its cell covers its neighbours' gateways too: the mean over the
    /// whole disc expected a device of an end cell of a corridor as near to the next gateway as to
    /// its own, and the tracker put it in the neighbour's small cell (docs/accuracy.md, "Regions
    /// that overlap").
    static func ownedPoints(of r: Int, in site: Site) -> [Point]? {
        let region = site.regions[r]
        guard region.radiusM > 0 else { return nil }
        let others = site.regions.indices.filter { j in
            j != r && site.regions[j].floor == region.floor
                && site.regions[j].position.distance(to: region.position) < site.regions[j].radiusM + region.radiusM
        }
        guard !others.isEmpty else { return nil }
        let rings = 16, angles = 32
        var owned: [Point] = []
        for i in 0..<rings {
            let rho = region.radiusM * ((Double(i) + 0.5) / Double(rings)).squareRoot()
            for k in 0..<angles {
                let theta = 2 * Double.pi * (Double(k) + 0.5) / Double(angles)
                let p = Point(x: region.position.x + rho * cos(theta), y: region.position.y + rho * sin(theta))
                let taken = others.contains { j in
                    let d = site.regions[j].position.distance(to: p)
                    return d <= site.regions[j].radiusM && d < rho
                }
                if !taken { owned.append(p) }
            }
        }
        return owned.isEmpty || owned.count == rings * angles ? nil : owned
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
