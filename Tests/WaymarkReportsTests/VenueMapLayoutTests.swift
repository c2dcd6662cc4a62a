import Foundation
import Testing
import WaymarkConfig
import WaymarkCore
import WaymarkReports

/// The venue map reads at a glance: on both example venues, at the renderer's default size, no
/// label overlaps another label or a circle and no two circles overlap, measured on the SVG's
/// own geometry; and nothing was left out to get there.
@Suite("Venue map layout")
struct VenueMapLayoutTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("deploy/examples")

    static func site(_ name: String) throws -> Site {
        try SiteLoader.load(path: examples.appendingPathComponent(name).path).site
    }

    /// Counts that vary a lot between regions (a few with none), and transitions on every edge of
    /// the site plus one jump between regions without an edge.
    static func busyData(_ site: Site) -> VenueMapData {
        var visits: [String: Int64] = [:]
        for (i, region) in site.regions.enumerated() where i % 7 != 3 {
            visits[region.id] = Int64((i * 7_919) % 12_000 + 1)
        }
        var transitions: [(from: String, to: String, count: Int64)] = []
        for (i, edge) in site.edges.enumerated() {
            transitions.append((edge.from, edge.to, Int64((i * 131) % 2_500 + 1)))
        }
        if site.regions.count > 3 {
            transitions.append((site.regions[0].id, site.regions[3].id, 17))
        }
        return VenueMapData(site: site, period: "2026-06-01T00:00:00Z to 2026-06-08T00:00:00Z", visits: visits, transitions: transitions)
    }

    static func emptyData(_ site: Site) -> VenueMapData {
        VenueMapData(site: site, period: "2026-06-01T00:00:00Z to 2026-06-02T00:00:00Z", visits: [:], transitions: [])
    }

    @Test(arguments: ["museum.yaml", "open-hall.yaml"])
    func noLabelOverlapsALabelOrACircleAndNoCirclesOverlap(venue: String) throws {
        let site = try Self.site(venue)
        for (what, data) in [("busy", Self.busyData(site)), ("empty", Self.emptyData(site))] {
            let svg = VenueMapRenderer().render(data)
            let geometry = try SVGGeometry(svg)
            let overlaps = geometry.overlaps()
            #expect(overlaps.isEmpty, "\(venue) (\(what)): \(overlaps.count) overlaps:\n\(overlaps.prefix(20).joined(separator: "\n"))")

            // Nothing dropped: a circle, a name and a count per region, a count per line with transitions.
            let regionCircles = geometry.circles.filter { site.region($0.what) != nil }
            #expect(regionCircles.count == site.regions.count, "\(venue) (\(what)): one circle per region")
            for region in site.regions {
                let lines = geometry.texts.filter { $0.region == region.id }
                let name = lines.filter { $0.cssClass == "region-label" }.map(\.text).joined(separator: " ")
                #expect(name == region.name, "\(venue) (\(what)): the name of \(region.id) is drawn whole")
                #expect(lines.filter { $0.cssClass == "region-count" }.map(\.text) == ["\(data.nodes.first { $0.id == region.id }!.visits) visits"])
            }
            let labelled = data.links.filter { link in
                link.transitions > 0 && site.region(link.from)?.floor == site.region(link.to)?.floor
            }
            #expect(geometry.texts.filter { $0.cssClass == "edge-label" }.count == labelled.count,
                    "\(venue) (\(what)): every line with transitions carries its count")

            if let dir = ProcessInfo.processInfo.environment["WAYMARK_KEEP_MAPS"] {
                try svg.write(toFile: "\(dir)/\(venue.replacingOccurrences(of: ".yaml", with: ""))-\(what).svg", atomically: true, encoding: .utf8)
            }
        }
    }

    /// The check above measures what it claims: two labels drawn on top of each other are found.
    @Test func theOverlapCheckFindsOverlaps() throws {
        let svg = """
            <svg xmlns="http://www.w3.org/2000/svg"><g transform="translate(100,0)">
            <circle cx="0" cy="50" r="10"/>
            <text x="0" y="50" font-size="12" text-anchor="middle">on the circle</text></g>
            <text x="10" y="100" font-size="12">first</text><text x="20" y="104" font-size="10">second</text>
            <text x="10" y="200" font-size="12">apart</text>
            </svg>
            """
        let overlaps = try SVGGeometry(svg).overlaps()
        #expect(overlaps.count == 2, "\(overlaps)")
        #expect(overlaps.contains { $0.contains("\"first\" overlaps text \"second\"") })
        #expect(overlaps.contains { $0.contains("\"on the circle\" overlaps circle") })
    }
}
