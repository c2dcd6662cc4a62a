import WaymarkCore

/// Draws a `VenueMapData` as a standalone SVG document: one panel per floor with the regions as
/// circles (area and colour by visits, entrances outlined) and the links as lines (width by
/// transitions; dashed where the site file has no edge), a legend, and the site and period in the
/// title. Labels are laid out so that none overlaps another or a circle (`VenueMapLayout`).
/// Pure: the same data gives the same bytes.
public struct VenueMapRenderer: Sendable {
    /// Width of one floor panel, in SVG user units (pixels when rendered at 100 %).
    public var panelWidth: Double = 640
    public var legendWidth: Double = 240
    public var minRadius: Double = 8
    public var maxRadius: Double = 44
    public var maxStroke: Double = 14
    /// Region names are wrapped at spaces to lines of at most this many characters.
    public var nameLineLimit: Int = 16
    /// What the count under each name counts: `12 visits` here; the console's live map says `3 inside`.
    public var countNoun = "visits"
    /// Room kept for counts of this many digits, so a page can update them in place without
    /// running into a neighbour (0: the drawn count's own width).
    public var reservedCountDigits = 0
    /// Replace the title and subtitle (nil: the visits-and-transitions wording with the period).
    public var titleText: String?
    public var subtitleText: String?
    /// Draw the legend (visit and transition scales) at the right.
    public var showsLegend = true

    public init() {}

    /// The SVG text.
    public func render(_ data: VenueMapData) -> String {
        let floors = data.floors.isEmpty ? [0] : data.floors
        let maxVisits = max(data.maxVisits, 1)
        let maxTransitions = max(data.maxTransitions, 1)
        let header = floors.count > 1 ? 26.0 : 0
        let panels = floors.map { floor in
            layout(data, floor: floor, maxVisits: maxVisits, header: header)
        }
        let top = 64.0
        let title = titleText ?? "\(data.siteID): visits and transitions, \(data.period)"
        let legendWidth = showsLegend ? self.legendWidth : 0
        let panelsWidth = panels.reduce(0) { $0 + $1.width }
        let panelHeight = panels.map(\.height).max() ?? 320
        // Wide enough for the title at 18 px (MapTextMetrics' advance, bold).
        let width = max(panelsWidth + legendWidth, 32 + MapTextMetrics.width(title, size: 18) * 1.1)
        let height = max(top + panelHeight + 24, top + 360)
        var svg = SVGWriter(width: width, height: height)
        svg.raw("<title>\(SVGWriter.escape(title))</title>")
        svg.raw("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>")
        svg.text(title, x: 16, y: 30, size: 18, weight: "bold", cssClass: "title")
        svg.text(subtitleText ?? "devices counted by region visits; line width shows transitions between regions",
                 x: 16, y: 50, size: 12, fill: "#555555", cssClass: "subtitle")

        var dx = 0.0
        for (index, floor) in floors.enumerated() {
            let panel = panels[index]
            defer { dx += panel.width }
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
                guard let p = panel.points[node.id], let r = panel.radii[node.id] else { continue }
                let f = Double(node.visits) / Double(maxVisits)
                svg.raw("<circle class=\"region\" data-region=\"\(SVGWriter.escape(node.id))\" data-visits=\"\(node.visits)\" cx=\"\(SVGWriter.n(p.x))\" cy=\"\(SVGWriter.n(p.y))\" r=\"\(SVGWriter.n(r))\" fill=\"\(color(fraction: f))\" fill-opacity=\"0.9\" stroke=\"\(node.isEntrance ? "#1b7f3b" : "#333333")\" stroke-width=\"\(node.isEntrance ? 3 : 1)\"/>")
            }
            for node in data.nodes where node.floor == floor {
                guard let placed = panel.labels[node.id] else { continue }
                svg.label(placed.label, in: placed.box, region: node.id)
            }
            svg.raw("</g>")
            // Transition counts on top of the lines, where the layout found room.
            svg.raw("<g class=\"edge-labels\">")
            for placed in panel.linkLabels {
                svg.label(placed.label, in: placed.box, region: nil)
            }
            svg.raw("</g></g>")
        }
        if showsLegend {
            legend(into: &svg, x: panelsWidth + 8, y: top, maxVisits: data.maxVisits, maxTransitions: data.maxTransitions)
        }
        return svg.finish()
    }

    /// One floor's layout: circles sized by visits, each region labelled with its name (wrapped)
    /// and its visits, each line with transitions labelled with their count.
    func layout(_ data: VenueMapData, floor: Int, maxVisits: Int64, header: Double) -> VenueMapLayout {
        let nodes = data.nodes.filter { $0.floor == floor }.map { node in
            VenueMapLayout.Node(
                id: node.id, position: node.position,
                radius: radius(fraction: Double(node.visits) / Double(maxVisits)),
                label: MapLabel(lines: MapLabel.wrap(node.name, limit: nameLineLimit).map {
                    MapLabel.Line(text: $0, size: 12, cssClass: "region-label", fill: "#222222")
                } + [MapLabel.Line(text: "\(node.visits) \(countNoun)", size: 10, cssClass: "region-count", fill: "#555555",
                                 minChars: reservedCountDigits + 1 + countNoun.count)]),
                priority: node.visits)
        }
        let links = data.links.map { link in
            VenueMapLayout.Link(
                from: link.from, to: link.to,
                label: link.transitions > 0
                    ? MapLabel(lines: [MapLabel.Line(text: "\(link.transitions)", size: 10, cssClass: "edge-label", fill: "#2d4a70")])
                    : nil,
                priority: link.transitions)
        }
        return VenueMapLayout.make(nodes: nodes, links: links, targetWidth: panelWidth, header: header)
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
}
