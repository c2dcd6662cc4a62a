import WaymarkCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How a device moves between the regions of its monitored set from one second to the next (the
/// tracker's transition model, docs/fusion.md "Movement").
///
/// *When* it leaves its region: a visit is either a pass (a few seconds) or a stay (minutes), so
/// the chance of leaving falls with the time already spent (`Dwell`: each region has a passing and
/// a staying phase). *Where* it goes (`matrix`): each region adjacent in the beacon graph with the
/// same weight (crossing into the next region's area takes no time from the boundary); a region
/// further along the graph only if walking through the regions in between fits in the gap `Δ`, with
/// weight `exp(−T / (v·Δ))` where `T` is the length walked through them (the shortest path, less
/// half of its first and last edges) and `v` the walking speed; a region not connected to it at
/// all almost never (`jumpWeight`). So after a second only neighbours are plausible, after half a
/// minute of silence anywhere a person could have walked to.
struct MotionModel: Sendable {
    /// Weight of a move to a region with no path from the current one (a re-acquisition elsewhere
    /// is the normal way to get there).
    static let jumpWeight = 1e-6
    /// Gaps longer than this are treated as this long (everything reachable is by then).
    static let maxGapS = 120.0
    /// Weight, relative to a linked region as far away, of a move between regions of one floor
    /// that the beacon graph does not link at all (a split graph: an edge left out). The walk is
    /// still timed by the straight-line gap between their areas; the graph's silence counts
    /// against it tenfold.
    static let unlinkedWeight = 0.1

    let walkingSpeed: Double

    /// Where a device that leaves a region goes, for a gap of `gap` seconds: the row-stochastic
    /// m × m matrix over `set` (row = from) with 0 on the diagonal, or a row with 1 on the
    /// diagonal for a region it cannot leave within the set (a set of one). Given the set's
    /// traversal lengths (m × m, `.infinity` where unconnected, 0 on the diagonal and between
    /// neighbours) and adjacency.
    func matrix(gap: Double, traversal: [Float], adjacent: [Bool], degree: [Float], m: Int, unlinked: [Float]? = nil) -> [Float] {
        let dt = min(max(gap, 1), Self.maxGapS)
        let reach = walkingSpeed * dt
        var out = [Float](repeating: 0, count: m * m)
        var w = [Double](repeating: 0, count: m)
        for i in 0..<m {
            var total = 0.0
            for j in 0..<m where j != i {
                let t = traversal[i * m + j]
                let v: Double
                if adjacent[i * m + j] {
                    v = 1 / Double(degree[i])
                } else if t.isFinite {
                    v = exp(-Double(t) / reach) / Double(degree[i])
                } else if let unlinked, unlinked[i * m + j].isFinite {
                    v = max(Self.jumpWeight, Self.unlinkedWeight * exp(-Double(unlinked[i * m + j]) / reach) / Double(degree[i]))
                } else {
                    v = Self.jumpWeight
                }
                w[j] = v
                total += v
            }
            guard m > 1, total > 0 else { out[i * m + i] = 1; continue }
            for j in 0..<m where j != i { out[i * m + j] = Float(w[j] / total) }
        }
        return out
    }

    /// How long a device stays in a region (a phase-type duration, docs/fusion.md "Movement"). A
    /// device that has just arrived is *passing*: it leaves again at a rate of one per `passS`
    /// seconds, or settles — becomes *staying* — at one per `settleS`; a staying device leaves at
    /// one per `stayS`. So one arrival in three becomes a stay, after about 7 s, and a stay lasts
    /// about two minutes: most visits are passes of seconds, a few last minutes, as visits do
    /// (docs/accuracy.md, "A two-phase dwell"). A device that leaves arrives passing. These are
    /// what people do, not a fit to one venue: the filter needs their order of magnitude (what a
    /// change of region costs against the evidence, early in a visit and late).
    enum Dwell {
        static let passS: Float = 10
        static let settleS: Float = 20
        static let stayS: Float = 120

        /// What happens in a gap of `gap` seconds (at least 1, at most `maxGapS`): a passing
        /// device stays passing (`keep`), leaves (`leavePass`) or settles (`settle`), the three
        /// summing to 1 (competing rates; a move and a second change within one gap are left
        /// out); a staying device leaves with `leaveStay`.
        static func rates(gap: Float) -> Rates {
            let d = min(max(gap, 1), Float(MotionModel.maxGapS))
            let leave = 1 / passS, settle = 1 / settleS, total = leave + settle
            let keep = expf(-total * d)
            return Rates(keep: keep, leavePass: leave / total * (1 - keep), settle: settle / total * (1 - keep),
                         leaveStay: 1 - expf(-d / stayS))
        }

        struct Rates: Equatable {
            var keep: Float
            var leavePass: Float
            var settle: Float
            var leaveStay: Float
        }
    }
}

/// The beacon graph's distances as the motion model needs them, per monitored set.
struct SetTopology: Sendable {
    /// m × m: length walked through the regions between two members (0 for neighbours and on the
    /// diagonal, +∞ when not connected within the search).
    var traversal: [Float]
    var adjacent: [Bool]
    /// m × m: for members of one floor that the graph does not connect at all, the straight-line
    /// gap between their areas (centre distance less both radii, at least 0); +∞ otherwise.
    var unlinked: [Float]
    /// Each member's number of neighbours in the whole graph (at least 1).
    var degree: [Float]
    /// The move matrix (`MotionModel.matrix`) for one second, and transposed
    /// (`RegionTracker.finalizeOldest`).
    var oneSecond: [Float]
    var oneSecondTransposed: [Float]

    init(traversal: [Float], adjacent: [Bool], unlinked: [Float], degree: [Float], oneSecond: [Float]) {
        self.traversal = traversal
        self.adjacent = adjacent
        self.unlinked = unlinked
        self.degree = degree
        self.oneSecond = oneSecond
        oneSecondTransposed = Self.transposed(oneSecond, m: degree.count)
    }

    /// The m × m matrix `a` (row-major) transposed.
    static func transposed(_ a: [Float], m: Int) -> [Float] {
        var out = a
        for i in 0..<m {
            for j in 0..<m { out[j * m + i] = a[i * m + j] }
        }
        return out
    }

    /// For every region, its monitored set's topology.
    static func build(site: Site, sets: [[Int32]], motion: MotionModel) -> [SetTopology] {
        let graph = site.graph
        let limit = 4 * (sets.map(\.count).max() ?? 1) + 4
        // Per region: traversal length to the regions within `limit` of it by path length.
        var traversalFrom: [[Int32: Float]] = []
        traversalFrom.reserveCapacity(graph.regionCount)
        for source in 0..<graph.regionCount {
            traversalFrom.append(traversals(from: source, graph: graph, limit: limit))
        }
        // The graph's connected parts (a split graph leaves regions with no path between them).
        var component = [Int](repeating: -1, count: graph.regionCount)
        for start in 0..<graph.regionCount where component[start] < 0 {
            component[start] = start
            var stack = [start]
            while let r = stack.popLast() {
                for n in graph.adjacency[r] where component[n.region] < 0 {
                    component[n.region] = start
                    stack.append(n.region)
                }
            }
        }
        return sets.map { set in
            let m = set.count
            var t = [Float](repeating: .infinity, count: m * m)
            var adj = [Bool](repeating: false, count: m * m)
            var unlinked = [Float](repeating: .infinity, count: m * m)
            for i in 0..<m {
                for j in 0..<m {
                    if i == j { t[i * m + j] = 0; continue }
                    adj[i * m + j] = graph.areAdjacent(Int(set[i]), Int(set[j]))
                    if let v = traversalFrom[Int(set[i])][set[j]] {
                        t[i * m + j] = v
                    } else if component[Int(set[i])] != component[Int(set[j])] {
                        let a = site.regions[Int(set[i])], b = site.regions[Int(set[j])]
                        if a.floor == b.floor {
                            unlinked[i * m + j] = Float(max(0, a.position.distance(to: b.position) - a.radiusM - b.radiusM))
                        }
                    }
                }
            }
            let degree = set.map { Float(max(1, graph.adjacency[Int($0)].count)) }
            return SetTopology(traversal: t, adjacent: adj, unlinked: unlinked, degree: degree,
                               oneSecond: motion.matrix(gap: 1, traversal: t, adjacent: adj, degree: degree, m: m, unlinked: unlinked))
        }
    }

    /// Dijkstra from `source` over at most `limit` regions, keeping for each the length of the
    /// first and of the last edge of its shortest path: traversal = length − (first + last) / 2.
    /// Deterministic: of regions equally near, the lowest index settles first (and of equally
    /// short paths to a region, the one through the region settled first counts).
    static func traversals(from source: Int, graph: BeaconGraph, limit: Int) -> [Int32: Float] {
        var best: [Int: (d: Double, first: Double, last: Double)] = [source: (0, 0, 0)]
        var settled = Set<Int>()
        var out: [Int32: Float] = [:]
        while settled.count < limit {
            var pick = -1, pickD = Double.infinity
            // The nearest unsettled region, ties to the lowest index: `best`'s iteration order is
            // seeded per process, and a tie broken by it made the matrices (and so every output)
            // differ between two runs of the same input.
            for (r, v) in best where !settled.contains(r) && (v.d < pickD || (v.d == pickD && r < pick)) { pick = r; pickD = v.d }
            guard pick >= 0, let here = best[pick] else { break }
            settled.insert(pick)
            if pick != source { out[Int32(pick)] = Float(max(0, here.d - (here.first + here.last) / 2)) }
            for n in graph.adjacency[pick] where !settled.contains(n.region) {
                let d = here.d + n.lengthM
                if d < best[n.region]?.d ?? .infinity {
                    best[n.region] = (d, pick == source ? n.lengthM : here.first, n.lengthM)
                }
            }
        }
        return out
    }
}
