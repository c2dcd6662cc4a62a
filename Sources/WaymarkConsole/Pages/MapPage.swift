import WaymarkCore
import WaymarkReports

/// The live venue map: every floor with its regions and how many devices are inside each now,
/// and the gateways with their health; the script updates both from `/live/events`.
enum MapPage {
    /// The map of the site with `occupancy` (devices inside now) as the counts. Circles keep one
    /// size, so a count can change in place; colour says occupied or empty.
    static func svg(site: Site, occupancy: [String: Int], title: String) -> String {
        var renderer = VenueMapRenderer()
        renderer.countNoun = "inside"
        renderer.reservedCountDigits = 3
        renderer.showsLegend = false
        renderer.minRadius = 14
        renderer.maxRadius = 14
        renderer.titleText = title
        renderer.subtitleText = "devices inside each region now (live region of each device)"
        let counts = occupancy.mapValues { Int64($0) }
        let data = VenueMapData(site: site, period: "live", visits: counts, transitions: [])
        return renderer.render(data).replacingOccurrences(of: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", with: "")
    }

    static func html(venue: LiveVenue) -> String {
        let site = venue.site
        let occupancy = venue.occupancy
        let gatewayRows = site.gateways.sorted { ($0.floor, $0.id) < ($1.floor, $1.id) }.map { gw -> [String] in
            let live = venue.gateways[gw.id]
            let state = live?.state ?? "unknown"
            return [HTML.escape(gw.id), "\(gw.floor)",
                    "<span class=\"badge \(HTML.escape(state))\" data-gateway=\"\(HTML.escape(gw.id))\">\(HTML.escape(state))</span>",
                    live?.spoolDepth.map(String.init) ?? "—"]
        }
        let body = """
            <h1>Live map</h1>
            <p class="status" data-live data-version="\(venue.version)"><span id="live-devices">\(venue.devices.count)</span> devices tracked now ·
            <span id="live-updated">as of page load</span></p>
            <div class="floors">
            <div class="floor" id="venue-map">\(svg(site: site, occupancy: occupancy, title: "\(site.id) now"))</div>
            <div class="side"><h2>Gateways</h2>
            \(HTML.table(columns: ["gateway", "floor", "state", "spool"], rows: gatewayRows, id: "gateway-health", numeric: [1, 3]))
            </div></div>
            """
        return HTML.page(title: "Live map", site: site.id, active: .map, body: body)
    }
}
