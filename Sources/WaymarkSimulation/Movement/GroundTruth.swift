public import WaymarkCore

/// One true visit: the device was in `region` from `entered` to `exited` by the site's own
/// definition — within `radius_m` of the region's position on its floor, the nearest region's
/// position winning when several radii cover the spot.
public struct TrueVisit: Hashable, Sendable {
    public var device: Int
    public var region: Int
    public var entered: Double
    public var exited: Double
    public init(device: Int, region: Int, entered: Double, exited: Double) {
        self.device = device
        self.region = region
        self.entered = entered
        self.exited = exited
    }
}

/// Computes true visits from trajectories.
public struct GroundTruth: Sendable {
    public let site: Site
    /// Time step used to sample walking segments (s); standing segments are exact.
    public var step: Double = 0.1
    private let regionsByFloor: [Int: [Int]]

    public init(site: Site) {
        self.site = site
        self.regionsByFloor = Dictionary(grouping: site.regions.indices, by: { site.regions[$0].floor })
    }

    /// The region a spot belongs to, or nil when it is outside every region.
    public func region(at position: Point, floor: Int) -> Int? {
        var best: Int? = nil
        var bestD = Double.infinity
        for r in regionsByFloor[floor] ?? [] {
            let region = site.regions[r]
            let d = region.position.distance(to: position)
            if d <= region.radiusM && d < bestD { best = r; bestD = d }
        }
        return best
    }

    /// The visits of `device` along `trajectory`, in time order.
    public func visits(device: Int, trajectory: Trajectory) -> [TrueVisit] {
        var out: [TrueVisit] = []
        var open: (region: Int, since: Double)? = nil
        func observe(_ r: Int?, at t: Double) {
            if open?.region == r { return }
            if let o = open { out.append(TrueVisit(device: device, region: o.region, entered: o.since, exited: t)) }
            open = r.map { ($0, t) }
        }
        let w = trajectory.waypoints
        observe(region(at: w[0].position, floor: w[0].floor), at: w[0].time)
        var cursor = 0
        for i in 1..<max(w.count, 1) where i < w.count {
            let a = w[i - 1], b = w[i]
            if a.position == b.position && a.floor == b.floor {
                continue  // standing still: the region cannot change
            }
            var t = a.time + step
            while t < b.time {
                let here = trajectory.location(at: t, cursor: &cursor)
                observe(region(at: here.position, floor: here.floor), at: t)
                t += step
            }
            observe(region(at: b.position, floor: b.floor), at: b.time)
        }
        if let o = open, trajectory.departure > o.since {
            out.append(TrueVisit(device: device, region: o.region, entered: o.since, exited: trajectory.departure))
        }
        return out
    }
}
