import WaymarkReports
/// Small helpers for the server-rendered pages: escaping and the page frame.
enum HTML {
    static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    /// Percent-encodes a value for a URL path segment or query value.
    static func urlComponent(_ s: String) -> String {
        var out = ""
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"), UInt8(ascii: ":"):
                out.unicodeScalars.append(UnicodeScalar(byte))
            default:
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return out
    }

    enum Section: String, CaseIterable {
        case map = "Live map"
        case devices = "Devices"
        case gateways = "Gateways"
        case reports = "Reports"

        var path: String {
            switch self {
            case .map: "/"
            case .devices: "/devices"
            case .gateways: "/gateways"
            case .reports: "/reports"
            }
        }
    }

    /// A whole page: navigation, the site id, `body`, and the console's own stylesheet and script
    /// (no external assets: consoles run on networks without internet access).
    static func page(title: String, site: String, active: Section?, body: String) -> String {
        let nav = Section.allCases.map { section in
            "<a href=\"\(section.path)\"\(section == active ? " class=\"active\" aria-current=\"page\"" : "")>\(section.rawValue)</a>"
        }.joined()
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escape(title)) · Waymark \(escape(site))</title>
            <link rel="stylesheet" href="/assets/console.css">
            </head><body>
            <header><span class="brand">Waymark</span> <span class="site">\(escape(site))</span>
            <nav>\(active == nil ? "" : nav)</nav>\(active == nil ? "" : "<form method=\"post\" action=\"/logout\" class=\"logout\"><button>Sign out</button></form>")</header>
            <main>
            \(body)
            </main>
            <script src="/assets/console.js"></script>
            </body></html>
            """
    }

    static func table(columns: [String], rows: [[String]], id: String? = nil, numeric: Set<Int> = []) -> String {
        var out = "<table\(id.map { " id=\"\($0)\"" } ?? "")><thead><tr>"
        for c in columns { out += "<th>\(escape(c))</th>" }
        out += "</tr></thead><tbody>"
        for row in rows {
            out += "<tr>"
            for (i, cell) in row.enumerated() { out += numeric.contains(i) ? "<td class=\"num\">\(cell)</td>" : "<td>\(cell)</td>" }
            out += "</tr>"
        }
        if rows.isEmpty { out += "<tr><td colspan=\"\(columns.count)\" class=\"empty\">nothing yet</td></tr>" }
        return out + "</tbody></table>"
    }

    /// `2026-06-01T09:00:03Z` from Unix seconds.
    static func time(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite else { return "—" }
        return ISOTime.format(seconds)
    }
}

/// ISO-8601 UTC without Foundation's formatters (which are not thread-safe on every platform).
enum ISOTime {
    /// The reports' own formatter (`ReportDate.iso`), so the console and `waymark report` write
    /// times alike.
    static func format(_ seconds: Double) -> String {
        ReportDate.iso(Int64(seconds.rounded(.down)))
    }

    /// Unix seconds of the UTC midnight that starts the day of `seconds`.
    static func startOfDay(_ seconds: Double) -> Double {
        (seconds / 86_400).rounded(.down) * 86_400
    }
}
