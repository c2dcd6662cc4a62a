extension VenueMapRenderer {
    /// The legend: three circle sizes with their visit counts, the colour ramp, and three line
    /// widths with their transition counts, plus the dashed "no site edge" and entrance outline keys.
    func legend(into svg: inout SVGWriter, x: Double, y: Double, maxVisits: Int64, maxTransitions: Int64) {
        svg.raw("<g class=\"legend\" id=\"legend\">")
        svg.raw("<rect x=\"\(SVGWriter.n(x))\" y=\"\(SVGWriter.n(y))\" width=\"\(SVGWriter.n(legendWidth - 16))\" height=\"340\" fill=\"#f7f7f7\" stroke=\"#cccccc\"/>")
        svg.text("Legend", x: x + 12, y: y + 22, size: 14, weight: "bold", cssClass: "legend-title")
        svg.text("Visits per region", x: x + 12, y: y + 44, size: 12, cssClass: "legend-heading")
        var cy = y + 58.0
        for f in [1.0, 0.5, 0.1] {
            let value = Int64((Double(maxVisits) * f).rounded())
            let r = min(radius(fraction: f), 22)
            svg.raw("<circle class=\"legend-region\" cx=\"\(SVGWriter.n(x + 36))\" cy=\"\(SVGWriter.n(cy + r))\" r=\"\(SVGWriter.n(r))\" fill=\"\(color(fraction: f))\" stroke=\"#333333\"/>")
            svg.text("\(value) visits", x: x + 72, y: cy + r + 4, size: 11, cssClass: "legend-label")
            cy += 2 * r + 6
        }
        svg.raw("<circle class=\"legend-entrance\" cx=\"\(SVGWriter.n(x + 36))\" cy=\"\(SVGWriter.n(cy + 8))\" r=\"8\" fill=\"#ffffff\" stroke=\"#1b7f3b\" stroke-width=\"3\"/>")
        svg.text("entrance", x: x + 72, y: cy + 12, size: 11, cssClass: "legend-label")
        cy += 30
        svg.text("Transitions (both directions)", x: x + 12, y: cy, size: 12, cssClass: "legend-heading")
        cy += 14
        for f in [1.0, 0.5, 0.1] {
            let value = Int64((Double(maxTransitions) * f).rounded())
            let w = 1.5 + (maxStroke - 1.5) * f
            svg.raw("<line class=\"legend-edge\" x1=\"\(SVGWriter.n(x + 16))\" y1=\"\(SVGWriter.n(cy))\" x2=\"\(SVGWriter.n(x + 60))\" y2=\"\(SVGWriter.n(cy))\" stroke=\"#4a6fa5\" stroke-width=\"\(SVGWriter.n(w))\" stroke-linecap=\"round\"/>")
            svg.text("\(value)", x: x + 72, y: cy + 4, size: 11, cssClass: "legend-label")
            cy += 20
        }
        svg.raw("<line class=\"legend-edge\" x1=\"\(SVGWriter.n(x + 16))\" y1=\"\(SVGWriter.n(cy))\" x2=\"\(SVGWriter.n(x + 60))\" y2=\"\(SVGWriter.n(cy))\" stroke=\"#9a9a9a\" stroke-width=\"2\" stroke-dasharray=\"6 5\"/>")
        svg.text("no walkable edge", x: x + 72, y: cy + 4, size: 11, cssClass: "legend-label")
        svg.raw("</g>")
    }
}
