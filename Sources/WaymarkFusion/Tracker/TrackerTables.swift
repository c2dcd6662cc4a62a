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
    /// Region-major (r · gatewayCount + g): −10·log10 of the typical distance (see `EvidenceModel`).
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
            let spread2 = region.radiusM * region.radiusM / 2
            let mine = roomGateways["\(region.floor)/\(region.room)"] ?? []
            for (g, gateway) in site.gateways.enumerated() {
                let dz = Double(region.floor - gateway.floor) * EvidenceModel.floorHeightM
                let flat = region.position.distance(to: gateway.position)
                let d2 = flat * flat + dz * dz + h2 + spread2
                ld[r * G + g] = Float(-5 * log10(d2))
                if gateway.floor == region.floor && mine.contains(g) { other[r * G + g] = 0 }
            }
        }
        logDistance = ld
        otherRoom = other
        motion = MotionModel(walkingSpeed: parameters.walkingSpeedMPS)
        topology = SetTopology.build(site: site, sets: monitoredSets, motion: motion)
        lag = max(0, Int(parameters.smoothingLagS.rounded()))
    }
}
