import ArgumentParser
import Foundation
import WaymarkConfig
import WaymarkCore
import WaymarkPostgres
import WaymarkReports
import WaymarkSimulation

/// `waymark report NAME`: the foot-traffic reports of DESIGN.md §5 as a table, CSV or JSON, and
/// `waymark report map --svg FILE` for the venue map. The figures come from the SQL functions in
/// schema/ (docs/reports.md), which an analyst can also call by hand in psql.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Print a foot-traffic report, or draw the venue map as SVG.",
        discussion: """
            Reports (NAME):
            \(ReportKind.choicesDescription)

            Dates are YYYY-MM-DD (UTC; a bare --to date includes that whole day) or ISO-8601 with a time \
            (2026-06-01T09:00:00Z, 2026-06-01T11:00+02:00). Periods are UTC hours, UTC days or ISO weeks; \
            the range widens to whole periods. Reports count devices, not people. See docs/reports.md.
            """)

    @Argument(help: ArgumentHelp("The report: \(ReportKind.allCases.map(\.rawValue).joined(separator: ", ")).", valueName: "name"))
    var name: String

    @Option(help: ArgumentHelp("Start of the range (inclusive).", valueName: "date"))
    var from: String

    @Option(help: ArgumentHelp("End of the range (exclusive; a bare date means the end of that day).", valueName: "date"))
    var to: String

    @Option(help: ArgumentHelp("Only this region (a region id from the site file).", valueName: "region"))
    var region: String?

    @Option(help: ArgumentHelp("Period: hour, day or week (default day; hour for notifications).", valueName: "period"))
    var by: String?

    @Option(help: ArgumentHelp("Output: table, csv or json.", valueName: "format"))
    var format: String = "table"

    @Option(help: ArgumentHelp("For paths: how many of each kind and length.", valueName: "n"))
    var limit: Int = 20

    @Option(help: ArgumentHelp("PostgreSQL URL (default: $WAYMARK_DATABASE_URL). A read-only login in the waymark_report role is enough.", valueName: "url"))
    var database: String?

    @Option(help: ArgumentHelp("The site file: chooses the site and gives the map its positions.", valueName: "site.yaml"))
    var site: String?

    @Option(name: .customLong("site-id"), help: ArgumentHelp("The site id, when the database holds several sites and no site file is given.", valueName: "id"))
    var siteID: String?

    @Option(help: ArgumentHelp("For map: the SVG file to write.", valueName: "file"))
    var svg: String?

    @Flag(help: "Do not refresh the rollups before reading (faster; figures may lag the latest writes). On a standby (read-only replica) they are never refreshed.")
    var noRefresh = false

    func run() throws {
        do {
            let request = try ReportRequest.parse(name: name, from: from, to: to, region: region, by: by, limit: limit)
            guard let outputFormat = ReportFormat(rawValue: format.lowercased()) else {
                throw ReportError(.badArgument, "--format '\(format)' is not valid; use one of: \(ReportFormat.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if request.kind == .map && (svg == nil || site == nil) {
                throw ReportError(.badArgument, "the map needs --svg FILE (where to write it) and --site SITE.yaml (the positions)")
            }
            let loadedSite = try site.map(Self.loadSite)
            guard let url = database ?? ProcessInfo.processInfo.environment["WAYMARK_DATABASE_URL"], !url.isEmpty else {
                throw ReportError(.badArgument, "no database: pass --database postgresql://USER@HOST/DB or set WAYMARK_DATABASE_URL")
            }
            let connection: PostgresConnection
            do {
                connection = try PostgresConnection(url: url)
            } catch {
                throw ReportError(.database, "cannot connect: \(error)")
            }
            defer { connection.close() }
            let runner = try ReportRunner(connection: connection)
            let siteID = try runner.resolveSite(loadedSite?.id ?? siteID)
            if try runner.isStandby() {
                // A streaming replica is read-only: the rollups are the primary's, as of its last
                // refresh (the aggregator's reports.refresh_interval_s). Say how far behind they are.
                let pending = try runner.pendingHours(site: siteID)
                if pending.count > 0 {
                    printError("waymark report: reading a standby (read-only replica), where the rollups cannot be refreshed: \(pending.count) hour(s) from \(pending.oldest ?? "?") on are not in them yet; they are refreshed on the primary (the aggregator's reports.refresh_interval_s, or `waymark report` there)")
                }
            } else if !noRefresh {
                try runner.refresh(site: siteID)
            }

            if request.kind == .map, let loadedSite, let svg {
                let data = try runner.mapData(request, site: loadedSite)
                let text = VenueMapRenderer().render(data)
                do {
                    try OutputFile.write(text, to: svg)
                } catch {
                    throw ReportError(.output, "cannot write the map: \(error)")
                }
                print("wrote \(svg): \(data.nodes.count) regions, \(data.links.count) links, \(request.rangeDescription)")
                return
            }
            let table = try runner.run(request, site: siteID)
            FileHandle.standardOutput.write(Data(ReportFormatter.render(table, as: outputFormat).utf8))
        } catch let error as ReportError {
            printError("waymark report: \(error.message)")
            throw ExitCode(error.code == .unknownReport || error.code == .badArgument ? 64 : 1)
        }
    }

    static func loadSite(_ path: String) throws -> Site {
        do {
            return try SiteLoader.load(path: path).site
        } catch {
            let lines = error.diagnostics.map(\.description).joined(separator: "\n")
            throw ReportError(.badArgument, "the site file is not valid:\n\(lines)")
        }
    }
}
