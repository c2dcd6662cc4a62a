import WaymarkCore

/// Draws a `VenueMapData` as a standalone SVG document: one panel per floor with the regions as
/// circles (area and colour by visits, entrances outlined) and the links as lines (width by
/// transitions; dashed where the site file has no edge), a legend, and the site and period in the
/// title. Pure: the same data gives the same bytes.
public struct VenueMapRenderer: Sendable {
    /// Width of one floor panel, in SVG user units (pixels when rendered at 100 %).
    public var panelWidth: Double = 640
    public var legendWidth: Double = 240
    public var minRadius: Double = 8
    public var maxRadius: Double = 44
    public var maxStroke: Double = 14

    public init() {}

    /// The SVG text.
    public func render(_ data: VenueMapData) -> String {
        let floors = data.floors.isEmpty ? [0] : data.floors
        let panels = floors.map { floor in layout(data.nodes.filter { $0.floor == floor }) }
        let panelHeight = max(320, panels.map(\.height).max() ?? 320)
        let top = 64.0
        let title = "\(data.siteID): visits and transitions, \(data.period)"
        // Wide enough for the title at 18 px (about 0.6 em per character).
        let width = max(Double(floors.count) * panelWidth + legendWidth, 32 + Double(title.count) * 11)
        let height = max(top + panelHeight + 24, top + 360)
        var svg = SVGWriter(width: width, height: height)
        svg.raw("<title>\(SVGWriter.escape(title))</title>")
        svg.raw("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>")
        svg.text(title, x: 16, y: 30, size: 18, weight: "bold", cssClass: "title")
        svg.text("devices counted by region visits; line width shows transitions between regions",
                 x: 16, y: 50, size: 12, fill: "#555555", cssClass: "subtitle")

        let maxVisits = max(data.maxVisits, 1)
        let maxTransitions = max(data.maxTransitions, 1)
        for (index, floor) in floors.enumerated() {
            let panel = panels[index]
            let dx = Double(index) * panelWidth
            svg.raw("<g class=\"floor\" data-floor=\"\(floor)\" transform=\"translate(\(SVGWriter.n(dx)),\(SVGWriter.n(top)))\">")
            if floors.count > 1 { svg.text("Floor \(floor)", x: 16, y: 16, size: 14, weight: "bold", cssClass: "floor-label") }
            svg.raw("<g class=\"edges\">")
            for link in data.links {
                guard let a = panel.points[link.from], let b = panel.points[link.to] else { continue }
                let w = link.transitions == 0 ? 1 : 1.5 + (maxStroke - 1.5) * Double(link.transitions) / Double(maxTransitions)
                svg.raw("<line class=\"edge\" data-from=\"\(SVGWriter.escape(link.from))\" data-to=\"\(SVGWriter.escape(link.to))\" data-transitions=\"\(link.transitions)\" x1=\"\(SVGWriter.n(a.x))\" y1=\"\(SVGWriter.n(a.y))\" x2=\"\(SVGWriter.n(b.x))\" y2=\"\(SVGWriter.n(b.y))\" stroke=\"\(link.isSiteEdge ? "#4a6fa5" : "#9a9a9a")\" stroke-width=\"\(SVGWriter.n(w))\" stroke-linecap=\"round\" stroke-opacity=\"0.8\"\(link.isSiteEdge ? "" : " stroke-dasharray=\"6 5\"")/>")
            }
            svg.raw("</g>")
            svg.raw("<g class=\"regions\">")
            for node in data.nodes where node.floor == floor {
                guard let p = panel.points[node.id] else { continue }
                let f = Double(node.visits) / Double(maxVisits)
                let r = radius(fraction: f)
                svg.raw("<circle class=\"region\" data-region=\"\(SVGWriter.escape(node.id))\" data-visits=\"\(node.visits)\" cx=\"\(SVGWriter.n(p.x))\" cy=\"\(SVGWriter.n(p.y))\" r=\"\(SVGWriter.n(r))\" fill=\"\(color(fraction: f))\" fill-opacity=\"0.9\" stroke=\"\(node.isEntrance ? "#1b7f3b" : "#333333")\" stroke-width=\"\(node.isEntrance ? 3 : 1)\"/>")
                svg.text(node.name, x: p.x, y: p.y + r + 14, size: 12, anchor: "middle", cssClass: "region-label", halo: true)
                svg.text("\(node.visits) visits", x: p.x, y: p.y + r + 27, size: 10, fill: "#555555", anchor: "middle", cssClass: "region-count", halo: true)
            }
            svg.raw("</g>")
            // Edge counts on top, halfway along the part of each line between the two circles.
            svg.raw("<g class=\"edge-labels\">")
            for link in data.links where link.transitions > 0 {
                guard let a = panel.points[link.from], let b = panel.points[link.to] else { continue }
                let ra = radius(fraction: Double(visits(link.from, in: data)) / Double(maxVisits))
                let rb = radius(fraction: Double(visits(link.to, in: data)) / Double(maxVisits))
                let d = max(a.distance(to: b), 1)
                let f = min(max((ra + (d - ra - rb) / 2) / d, 0), 1)
                svg.text("\(link.transitions)", x: a.x + (b.x - a.x) * f + 5, y: a.y + (b.y - a.y) * f + 4, size: 10,
                         fill: "#2d4a70", cssClass: "edge-label", halo: true)
            }
            svg.raw("</g></g>")
        }
        legend(into: &svg, x: Double(floors.count) * panelWidth + 8, y: top, maxVisits: data.maxVisits,
               maxTransitions: data.maxTransitions)
        return svg.finish()
    }

    func visits(_ region: String, in data: VenueMapData) -> Int64 {
        data.nodes.first { $0.id == region }?.visits ?? 0
    }

    /// Circle radius: area proportional to visits, with a floor so empty regions stay visible.
    func radius(fraction f: Double) -> Double {
        minRadius + (maxRadius - minRadius) * max(0, min(1, f)).squareRoot()
    }

    /// Pale yellow (few visits) to deep red (most visits).
    func color(fraction f: Double) -> String {
        let t = max(0, min(1, f))
        let low = (255.0, 237.0, 160.0), high = (189.0, 0.0, 38.0)
        func mix(_ a: Double, _ b: Double) -> Int { Int((a + (b - a) * t).rounded()) }
        return SVGWriter.hexColor(mix(low.0, high.0), mix(low.1, high.1), mix(low.2, high.2))
    }

    struct Panel {
        var points: [String: Point]
        var height: Double
    }

    /// Scales one floor's positions (metres, y up) into a panel (pixels, y down) with a margin
    /// that leaves room for the largest circle and its labels.
    func layout(_ nodes: [VenueMapData.Node]) -> Panel {
        guard !nodes.isEmpty else { return Panel(points: [:], height: 320) }
        let margin = maxRadius + 36
        let xs = nodes.map(\.position.x), ys = nodes.map(\.position.y)
        let minX = xs.min()!, maxX = xs.max()!, minY = ys.min()!, maxY = ys.max()!
        let spanX = maxX - minX, spanY = maxY - minY
        let usable = panelWidth - 2 * margin
        let scale = max(spanX, spanY) > 0 ? usable / max(spanX, spanY) : 1
        let height = max(320, spanY * scale + 2 * margin)
        var points: [String: Point] = [:]
        for node in nodes {
            let x = spanX > 0 ? margin + (node.position.x - minX) * scale : panelWidth / 2
            let y = spanY > 0 ? margin + (maxY - node.position.y) * scale : height / 2
            points[node.id] = Point(x: x, y: y)
        }
        return Panel(points: points, height: height)
    }
}
