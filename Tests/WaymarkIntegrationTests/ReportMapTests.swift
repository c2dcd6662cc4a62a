import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import WaymarkPostgres
import WaymarkReports

/// The venue map from the database: its numbers match the fixture, its structure is what a reader
/// needs (title with the period, one circle per region, edges, legend), and rsvg-convert renders it.
@Suite("Report map", .enabled(if: PostgresTestServer.shouldRun))
struct ReportMapTests {
    @Test func mapFromTheDatabaseRendersWithRegionsEdgesLegendAndPeriod() throws {
        let (db, conn, fixture, runner) = try ReportSQLTests.loaded("map")
        defer { conn.close(); db.drop() }
        let from = ReportFixture.start, to = ReportFixture.start + 7 * 86_400
        let request = ReportRequest(kind: .map, from: from, to: to)
        let data = try runner.mapData(request, site: fixture.site)
        let svg = VenueMapRenderer().render(data)

        // Figures: visits per region and transitions per pair (both directions) over whole hours.
        var visits: [String: Int64] = [:]
        for v in fixture.visits where v.entered >= from && v.entered < to { visits[v.region, default: 0] += 1 }
        var moves: [String: Int64] = [:]
        for t in fixture.transitions where t.at >= from && t.at < to { moves[[t.from, t.to].sorted().joined(separator: "|"), default: 0] += 1 }

        let elements = try SVGElements(svg)
        #expect(elements.all.first?.name == "svg")
        #expect(elements.text(of: "title") == "report-test: visits and transitions, 2026-06-01T00:00:00Z to 2026-06-08T00:00:00Z")
        #expect(elements.text(ofClass: "title") == elements.text(of: "title"), "the title is also drawn")
        let circles = elements.all.filter { $0.name == "circle" && $0.attributes["class"] == "region" }
        #expect(circles.count == fixture.site.regions.count)
        for c in circles {
            let id = c.attributes["data-region"] ?? "?"
            #expect(c.attributes["data-visits"] == String(visits[id] ?? 0), "visits of \(id)")
        }
        // Bigger counts draw bigger circles.
        let radii = circles.map { (Int64($0.attributes["data-visits"] ?? "") ?? 0, Double($0.attributes["r"] ?? "") ?? 0) }
        for a in radii { for b in radii where a.0 > b.0 { #expect(a.1 >= b.1) } }
        let edges = elements.all.filter { $0.name == "line" && $0.attributes["class"] == "edge" }
        #expect(edges.count >= fixture.site.edges.count)
        for e in edges {
            let key = [e.attributes["data-from"] ?? "", e.attributes["data-to"] ?? ""].sorted().joined(separator: "|")
            #expect(e.attributes["data-transitions"] == String(moves[key] ?? 0), "transitions \(key)")
        }
        let legend = elements.all.filter { $0.attributes["id"] == "legend" }
        #expect(legend.count == 1)
        let legendText = elements.all.filter { $0.insideLegend && $0.name == "text" }.map(\.text).joined(separator: " ")
        #expect(legendText.contains("Visits per region") && legendText.contains("Transitions"), "legend: \(legendText)")
        #expect(svg.contains("Café &amp; bar"), "names are escaped")

        // rsvg-convert (librsvg2-bin, installed by scripts/setup.sh) must render it to a PNG.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-map-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let svgURL = dir.appendingPathComponent("map.svg"), pngURL = dir.appendingPathComponent("map.png")
        try svg.write(to: svgURL, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["rsvg-convert", "--format=png", "--output=\(pngURL.path)", svgURL.path]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "rsvg-convert failed; run scripts/setup.sh to install librsvg2-bin")
        let png = try Data(contentsOf: pngURL)
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG file")
        #expect(png.count > 10_000, "the PNG has content: \(png.count) bytes")
        if let keep = ProcessInfo.processInfo.environment["WAYMARK_KEEP_MAP"] {
            try? FileManager.default.removeItem(atPath: keep)
            try FileManager.default.copyItem(at: pngURL, to: URL(fileURLWithPath: keep))
        }
    }
}

/// The elements of an SVG document with their attributes and text, read with XMLParser.
final class SVGElements: NSObject, XMLParserDelegate {
    struct Element {
        var name: String
        var attributes: [String: String]
        var text = ""
        var insideLegend: Bool
    }

    private(set) var all: [Element] = []
    private var open: [Int] = []
    private var legendDepth: Int?

    init(_ svg: String) throws {
        super.init()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = self
        guard parser.parse() else { throw parser.parserError ?? CocoaError(.coderReadCorrupt) }
    }

    func text(of name: String) -> String? { all.first { $0.name == name }?.text }
    func text(ofClass cssClass: String) -> String? { all.first { $0.attributes["class"] == cssClass }?.text }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        if attributes["id"] == "legend" { legendDepth = open.count }
        all.append(Element(name: name, attributes: attributes, insideLegend: legendDepth != nil))
        open.append(all.count - 1)
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        open.removeLast()
        if legendDepth == open.count { legendDepth = nil }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if let last = open.last { all[last].text += string }
    }
}
