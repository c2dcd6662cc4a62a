import WaymarkCore

/// Devices: a search over the ids the aggregator publishes (as published: pseudonymous ids stay
/// pseudonymous), and one device's live state with today's path.
enum DevicesPage {
    static func regionName(_ id: String?, in site: Site) -> String {
        guard let id else { return "—" }
        return HTML.escape(site.region(id)?.name ?? id)
    }

    static func list(venue: LiveVenue, query: String) -> String {
        let matches = venue.searchDevices(query)
        let rows = matches.map { d -> [String] in
            ["<a href=\"/devices/\(HTML.urlComponent(d.id))\">\(HTML.escape(d.id))</a>", regionName(d.currentRegion, in: venue.site),
             d.confidence.map { String(format: "%.2f", $0) } ?? "—", HTML.escape(d.proximity ?? "—"), HTML.time(d.updatedAt)]
        }
        let body = """
            <h1>Devices</h1>
            <form class="inline" method="get" action="/devices">
            <label>Device id (or part of it)<input name="q" value="\(HTML.escape(query))" size="48" autofocus></label>
            <button>Search</button></form>
            <p class="status">\(matches.count) of \(venue.devices.count) devices with a published state</p>
            \(HTML.table(columns: ["device", "current region", "confidence", "proximity", "updated"], rows: rows, id: "devices", numeric: [2]))
            """
        return HTML.page(title: "Devices", site: venue.site.id, active: .devices, body: body)
    }

    struct Visit: Sendable {
        var region: String
        var enteredAt: String
        var exitedAt: String
        var dwellS: Double
        var inferred: Bool
    }

    static func detail(venue: LiveVenue, id: String, path: [Visit], pathError: String?) -> String {
        let site = venue.site
        let device = venue.devices[id]
        let state: String
        if let device {
            state = HTML.table(columns: ["current region", "confidence", "proximity", "distance", "updated"], rows: [[
                regionName(device.currentRegion, in: site), device.confidence.map { String(format: "%.2f", $0) } ?? "—",
                HTML.escape(device.proximity ?? "—"), device.distanceM.map { String(format: "%.1f m", $0) } ?? "—",
                HTML.time(device.updatedAt),
            ]], id: "device-state")
        } else {
            state = "<p class=\"status\">No live state published for this device (not seen recently, or not an id the aggregator publishes).</p>"
        }
        let rows = path.map { v in
            [regionName(v.region, in: site), HTML.escape(v.enteredAt), HTML.escape(v.exitedAt), String(format: "%.0f", v.dwellS), v.inferred ? "inferred" : ""]
        }
        var regions: [String] = path.map(\.region)
        if let current = device?.currentRegion, regions.last != current { regions.append(current) }
        let pathJSON = "[" + regions.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
            .joined(separator: ",") + "]"
        let body = """
            <h1>Device <code>\(HTML.escape(id))</code></h1>
            \(state)
            <h2>Today's path (UTC day)</h2>
            \(pathError.map { "<p class=\"error\">\(HTML.escape($0))</p>" } ?? "")
            \(HTML.table(columns: ["region", "entered", "left", "dwell s", ""], rows: rows, id: "device-path", numeric: [3]))
            <h2>On the map</h2>
            <p class="status">regions of today's path outlined in blue</p>
            <div class="floor" data-path="\(HTML.escape(pathJSON))" data-live>\(MapPage.svg(site: site, occupancy: venue.occupancy, title: "\(site.id): today's path"))</div>
            """
        return HTML.page(title: "Device", site: site.id, active: .devices, body: body)
    }
}
