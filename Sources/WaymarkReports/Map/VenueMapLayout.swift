import WaymarkCore

/// Where everything on one floor panel goes: circle centres and radii, each region's label block
/// and the transition counts on the lines, such that no label overlaps another label or a circle
/// and no two circles overlap (estimated with `MapTextMetrics`).
///
/// Pure and deterministic. The scale starts where the floor fills `targetWidth` (or where the
/// circles first stand apart, if that is larger) and grows until every label finds a free place;
/// the panel is then as large as its contents.
struct VenueMapLayout: Sendable {
    struct Node: Sendable {
        var id: String
        var position: Point
        var radius: Double
        var label: MapLabel
        /// Larger first when placing labels.
        var priority: Int64
    }

    struct Link: Sendable {
        var from: String
        var to: String
        /// Nil: the line carries no label.
        var label: MapLabel?
        var priority: Int64
    }

    struct PlacedLink: Sendable {
        var index: Int
        var label: MapLabel
        var box: MapBox
    }

    /// Panel coordinates (origin at the panel's top left, y down).
    var points: [String: Point] = [:]
    var radii: [String: Double] = [:]
    var labels: [String: (label: MapLabel, box: MapBox)] = [:]
    var linkLabels: [PlacedLink] = []
    var width: Double = 0
    var height: Double = 0
    /// Pixels per metre finally used.
    var scale: Double = 0

    /// Space kept clear between a circle and anything else, and around the panel's contents.
    static let circleGap = 3.0
    static let margin = 12.0

    /// Lays out `nodes` (positions in metres, y up) and `links` in a panel whose contents start
    /// `header` units below its top.
    static func make(nodes: [Node], links: [Link], targetWidth: Double, header: Double) -> VenueMapLayout {
        guard !nodes.isEmpty else {
            var empty = VenueMapLayout()
            empty.width = targetWidth
            empty.height = header + 2 * margin
            return empty
        }
        let positions = separated(nodes)
        let xs = positions.map(\.x), ys = positions.map(\.y)
        let span = max(xs.max()! - xs.min()!, ys.max()! - ys.min()!)
        let maxRadius = nodes.map(\.radius).max()!
        var scale = span > 0 ? max(1, (targetWidth - 2 * (maxRadius + margin)) / span) : 1
        for i in nodes.indices {
            for j in nodes.indices where j > i {
                let d = positions[i].distance(to: positions[j])
                scale = max(scale, (nodes[i].radius + nodes[j].radius + 2 * circleGap) / d)
            }
        }
        var attempt = 0
        while true {
            if let placed = place(nodes: nodes, positions: positions, links: links, scale: scale) ?? (attempt >= 40 ? forced(nodes: nodes, positions: positions, links: links, scale: scale) : nil) {
                return placed.framed(header: header)
            }
            scale *= 1.12
            attempt += 1
        }
    }

    /// Moves regions that share a position (same gateway spot on one floor) apart by a few
    /// centimetres, so that scaling can separate them.
    static func separated(_ nodes: [Node]) -> [Point] {
        var out: [Point] = []
        for node in nodes {
            var p = node.position
            var k = 0
            while out.contains(where: { $0.distance(to: p) < 0.01 }) {
                k += 1
                p = Point(x: node.position.x + 0.5 * Double(k), y: node.position.y)
            }
            out.append(p)
        }
        return out
    }

    /// One attempt at `scale`: nil when some label finds no free place.
    static func place(nodes: [Node], positions: [Point], links: [Link], scale: Double, allowFailure: Bool = false) -> VenueMapLayout? {
        var layout = VenueMapLayout()
        layout.scale = scale
        for (node, p) in zip(nodes, positions) {
            layout.points[node.id] = Point(x: p.x * scale, y: -p.y * scale)
            layout.radii[node.id] = node.radius
        }
        let segments: [(Point, Point)] = links.compactMap { link in
            guard let a = layout.points[link.from], let b = layout.points[link.to] else { return nil }
            return (a, b)
        }
        var boxes: [MapBox] = []
        func isFree(_ box: MapBox) -> Bool {
            for (id, p) in layout.points where box.intersects(circle: p, radius: layout.radii[id]! + circleGap) { return false }
            return !boxes.contains { $0.intersects(box) }
        }
        func crossings(_ box: MapBox) -> Int {
            segments.reduce(0) { $0 + (box.intersects(segmentFrom: $1.0, to: $1.1) ? 1 : 0) }
        }

        let order = nodes.indices.sorted { (nodes[$0].priority, nodes[$1].id) > (nodes[$1].priority, nodes[$0].id) }
        for i in order {
            let node = nodes[i]
            let c = layout.points[node.id]!
            var best: (score: Double, box: MapBox)?
            for (ring, gap) in [3.0, 10, 20, 34, 52].enumerated() {
                for (k, center) in candidates(around: c, radius: node.radius, gap: gap, label: node.label).enumerated() {
                    let box = node.label.box(centeredAt: center)
                    guard isFree(box) else { continue }
                    let score = Double(ring) * 10 + Double(crossings(box)) * 12 + Double(k) * 0.5
                    if best == nil || score < best!.score { best = (score, box) }
                }
            }
            guard let chosen = best?.box else {
                if allowFailure { continue }
                return nil
            }
            boxes.append(chosen)
            layout.labels[node.id] = (node.label, chosen)
        }

        let linkOrder = links.indices.sorted { (links[$0].priority, $1) > (links[$1].priority, $0) }
        for index in linkOrder {
            let link = links[index]
            guard let label = link.label, let a = layout.points[link.from], let b = layout.points[link.to] else { continue }
            let ra = layout.radii[link.from]!, rb = layout.radii[link.to]!
            let d = a.distance(to: b)
            guard d > 0 else { continue }
            let ux = (b.x - a.x) / d, uy = (b.y - a.y) / d
            var chosen: MapBox?
            search: for offset in [0.0, 1, -1, 2, -2] {
                for t in [0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8] {
                    let along = ra + (d - ra - rb) * t
                    let shift = offset * (label.height / 2 + 4)
                    let center = Point(x: a.x + ux * along - uy * shift, y: a.y + uy * along + ux * shift)
                    let box = label.box(centeredAt: center)
                    if isFree(box) { chosen = box; break search }
                }
            }
            guard let box = chosen else {
                if allowFailure { continue }
                return nil
            }
            boxes.append(box)
            layout.linkLabels.append(PlacedLink(index: index, label: label, box: box))
        }
        return layout
    }

    /// The last resort after many larger scales: whatever found a place (never reached on the
    /// example venues; a test checks that).
    static func forced(nodes: [Node], positions: [Point], links: [Link], scale: Double) -> VenueMapLayout? {
        place(nodes: nodes, positions: positions, links: links, scale: scale, allowFailure: true)
    }

    /// Label centres around a circle, best first: below, above, right, left, then the diagonals.
    static func candidates(around c: Point, radius r: Double, gap: Double, label: MapLabel) -> [Point] {
        let w = label.width / 2, h = label.height / 2
        let d = r * 0.7071 + gap
        return [
            Point(x: c.x, y: c.y + r + gap + h), Point(x: c.x, y: c.y - r - gap - h),
            Point(x: c.x + r + gap + w, y: c.y), Point(x: c.x - r - gap - w, y: c.y),
            Point(x: c.x + d + w, y: c.y + d + h), Point(x: c.x - d - w, y: c.y + d + h),
            Point(x: c.x + d + w, y: c.y - d - h), Point(x: c.x - d - w, y: c.y - d - h),
        ]
    }

    /// Moves the contents to the panel's origin (after `header`) and sizes the panel to them.
    func framed(header: Double) -> VenueMapLayout {
        var bounds: MapBox?
        for (id, p) in points {
            let r = radii[id]!
            let box = MapBox(x: p.x - r, y: p.y - r, width: 2 * r, height: 2 * r)
            bounds = bounds?.union(box) ?? box
        }
        for (_, placed) in labels { bounds = bounds?.union(placed.box) ?? placed.box }
        for placed in linkLabels { bounds = bounds?.union(placed.box) ?? placed.box }
        guard let bounds else { return self }
        let dx = VenueMapLayout.margin - bounds.x, dy = header + VenueMapLayout.margin - bounds.y
        func move(_ b: MapBox) -> MapBox { MapBox(x: b.x + dx, y: b.y + dy, width: b.width, height: b.height) }
        var out = self
        out.points = points.mapValues { Point(x: $0.x + dx, y: $0.y + dy) }
        out.labels = labels.mapValues { ($0.label, move($0.box)) }
        out.linkLabels = linkLabels.map { PlacedLink(index: $0.index, label: $0.label, box: move($0.box)) }
        out.width = bounds.width + 2 * VenueMapLayout.margin
        out.height = header + bounds.height + 2 * VenueMapLayout.margin
        return out
    }
}
