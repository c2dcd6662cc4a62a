import WaymarkCore

/// What the venue map shows: the site's regions and edges at their positions, visits per region
/// and transitions per region pair over one period. Built from the `traffic` and `transitions`
/// reports (or by hand in tests); `VenueMapRenderer` turns it into SVG.
public struct VenueMapData: Sendable {
    public struct Node: Sendable, Equatable {
        public var id: String
        public var name: String
        public var position: Point
        public var floor: Int
        public var isEntrance: Bool
        public var visits: Int64
    }

    /// A pair of regions with the transitions between them, both directions added.
    public struct Link: Sendable, Equatable {
        public var from: String
        public var to: String
        public var transitions: Int64
        /// Whether the site file has a walkable edge between the two regions. Transitions between
        /// regions without an edge (inferred jumps) are drawn dashed.
        public var isSiteEdge: Bool
    }

    public var siteID: String
    /// The period shown, e.g. `2026-06-01T00:00:00Z to 2026-06-08T00:00:00Z`.
    public var period: String
    public var nodes: [Node]
    public var links: [Link]

    /// Joins a site with per-region visit counts and directed transition counts. Counts for
    /// regions that are not in the site file are ignored (the site file drives the picture).
    public init(site: Site, period: String, visits: [String: Int64],
                transitions: [(from: String, to: String, count: Int64)]) {
        self.siteID = site.id
        self.period = period
        self.nodes = site.regions.map {
            Node(id: $0.id, name: $0.name, position: $0.position, floor: $0.floor,
                 isEntrance: $0.isEntrance, visits: visits[$0.id] ?? 0)
        }
        struct Pair: Hashable { var a: String; var b: String }
        func pair(_ x: String, _ y: String) -> Pair { x < y ? Pair(a: x, b: y) : Pair(a: y, b: x) }
        var counts: [Pair: Int64] = [:]
        var order: [Pair] = []
        for e in site.edges {
            let p = pair(e.from, e.to)
            if counts[p] == nil { counts[p] = 0; order.append(p) }
        }
        let siteEdges = Set(order)
        for t in transitions where t.from != t.to && site.region(t.from) != nil && site.region(t.to) != nil {
            let p = pair(t.from, t.to)
            if counts[p] == nil { order.append(p) }
            counts[p, default: 0] += t.count
        }
        self.links = order.map { Link(from: $0.a, to: $0.b, transitions: counts[$0] ?? 0, isSiteEdge: siteEdges.contains($0)) }
    }

    public var maxVisits: Int64 { nodes.map(\.visits).max() ?? 0 }
    public var maxTransitions: Int64 { links.map(\.transitions).max() ?? 0 }
    public var floors: [Int] { Array(Set(nodes.map(\.floor))).sorted() }
}
