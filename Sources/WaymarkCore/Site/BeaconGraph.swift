import HeapModule

/// The beacon graph: vertices are regions (by index into `Site.regions`), edges join regions a
/// person can walk between directly, weighted by length in metres.
///
/// Each region's monitored set (itself plus the nearest regions by shortest-path length) is
/// computed once, when the site is loaded, for the largest set size in use; the fusion engine then
/// only slices these arrays. Shortest paths between two regions are computed on demand.
public struct BeaconGraph: Sendable {
    public struct Neighbour: Hashable, Sendable {
        public var region: Int
        public var lengthM: Double
    }

    public let adjacency: [[Neighbour]]

    public init(regionCount: Int, edges: [(Int, Int, Double)]) {
        var adj = Array(repeating: [Neighbour](), count: regionCount)
        for (a, b, length) in edges where a != b {
            // Keep the shortest of parallel edges.
            if let i = adj[a].firstIndex(where: { $0.region == b }) {
                adj[a][i].lengthM = min(adj[a][i].lengthM, length)
                let j = adj[b].firstIndex(where: { $0.region == a })!
                adj[b][j].lengthM = min(adj[b][j].lengthM, length)
            } else {
                adj[a].append(Neighbour(region: b, lengthM: length))
                adj[b].append(Neighbour(region: a, lengthM: length))
            }
        }
        for i in adj.indices { adj[i].sort { ($0.lengthM, $0.region) < ($1.lengthM, $1.region) } }
        self.adjacency = adj
    }

    public var regionCount: Int { adjacency.count }

    public func areAdjacent(_ a: Int, _ b: Int) -> Bool {
        a == b || adjacency[a].contains { $0.region == b }
    }

    /// Regions ordered by shortest-path length from `source` (source first, ties broken by region
    /// index), at most `limit` of them; unreachable regions are not included.
    public func nearest(to source: Int, limit: Int) -> [(region: Int, distanceM: Double)] {
        var result: [(region: Int, distanceM: Double)] = []
        guard limit > 0 else { return result }
        var settled = Set<Int>()
        var heap = MinHeap()
        heap.push(0, source)
        while let (d, r) = heap.pop(), result.count < limit {
            if settled.contains(r) { continue }
            settled.insert(r)
            result.append((r, d))
            for n in adjacency[r] where !settled.contains(n.region) {
                heap.push(d + n.lengthM, n.region)
            }
        }
        return result
    }

    /// Shortest path from `a` to `b` as region indices including both ends; nil when unreachable.
    public func shortestPath(from a: Int, to b: Int) -> (regions: [Int], lengthM: Double)? {
        if a == b { return ([a], 0) }
        var dist = [Int: Double]()
        var previous = [Int: Int]()
        var heap = MinHeap()
        dist[a] = 0
        heap.push(0, a)
        while let (d, r) = heap.pop() {
            if d > dist[r, default: .infinity] { continue }
            if r == b { break }
            for n in adjacency[r] {
                let nd = d + n.lengthM
                let old = dist[n.region, default: .infinity]
                if nd < old || (nd == old && r < previous[n.region, default: .max]) {
                    dist[n.region] = nd
                    previous[n.region] = r
                    heap.push(nd, n.region)
                }
            }
        }
        guard let total = dist[b] else { return nil }
        var path = [b]
        var cursor = b
        while let p = previous[cursor] { path.append(p); cursor = p }
        return (path.reversed(), total)
    }

    /// Sets of regions that are connected to each other; more than one means the graph is split.
    public func components() -> [[Int]] {
        var seen = Array(repeating: false, count: regionCount)
        var out: [[Int]] = []
        for start in 0..<regionCount where !seen[start] {
            var stack = [start]
            var comp: [Int] = []
            seen[start] = true
            while let r = stack.popLast() {
                comp.append(r)
                for n in adjacency[r] where !seen[n.region] { seen[n.region] = true; stack.append(n.region) }
            }
            out.append(comp.sorted())
        }
        return out
    }
}

/// Regions waiting in a shortest-path search, nearest first and, at equal distance, lowest region
/// index first, so that results are deterministic.
struct MinHeap {
    private struct Entry: Comparable {
        var distance: Double
        var region: Int
        static func < (a: Entry, b: Entry) -> Bool { (a.distance, a.region) < (b.distance, b.region) }
    }

    private var heap = Heap<Entry>()

    mutating func push(_ d: Double, _ r: Int) { heap.insert(Entry(distance: d, region: r)) }

    mutating func pop() -> (Double, Int)? { heap.popMin().map { ($0.distance, $0.region) } }
}
