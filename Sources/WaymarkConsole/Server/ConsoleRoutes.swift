import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import WaymarkCore
import WaymarkJSON
import WaymarkReports

/// The console's routes, grouped by resource: the live map and its event stream, devices,
/// gateways, reports (HTML and CSV), sign-in and the static assets. Read-only: no route changes
/// anything but a browser's own session.
struct ConsoleRoutes: Sendable {
    let site: Site
    let hub: LiveHub
    let database: ConsoleDatabase
    let credentials: ConsoleCredentials
    let sessions: SessionStore
    let authDisabled: Bool
    let logger: Logger
    /// How often the event stream looks for changes, and sends a comment to keep proxies open.
    var pollInterval: Duration = .milliseconds(250)
    var keepAliveInterval: Duration = .seconds(15)

    static func html(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    func register(on router: Router<BasicRequestContext>) {
        router.get("/healthz") { _, _ in "ok\n" }
        router.get("/assets/console.css") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: ConsoleAssets.css)))
        }
        router.get("/assets/console.js") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/javascript; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: ConsoleAssets.js)))
        }
        registerSignIn(on: router)
        router.get("/") { _, _ in Self.html(MapPage.html(venue: hub.snapshot())) }
        router.get("/live/events") { _, _ in eventStream() }
        router.get("/live/state.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: Self.liveJSON(hub.snapshot()))))
        }
        router.get("/devices") { request, _ in
            Self.html(DevicesPage.list(venue: hub.snapshot(), query: request.uri.queryParameters.get("q") ?? ""))
        }
        router.get("/devices/:id") { _, context in
            let raw = context.parameters.get("id") ?? ""
            let id = raw.removingPercentEncoding ?? raw
            var path: [DevicesPage.Visit] = []
            var pathError: String?
            do {
                path = try await database.visits(site: site.id, device: id, since: ISOTime.startOfDay(Date().timeIntervalSince1970))
            } catch {
                pathError = "today's path is not available: \(error)"
                logger.warning("device path query failed", metadata: ["error": .string("\(error)")])
            }
            return Self.html(DevicesPage.detail(venue: hub.snapshot(), id: id, path: path, pathError: pathError))
        }
        router.get("/gateways") { _, _ in
            let now = Int64(Date().timeIntervalSince1970)
            let day = Int64(ISOTime.startOfDay(Double(now)))
            var health: ReportTable?
            var healthError: String?
            do {
                health = try await database.report(ReportRequest(kind: .gateways, from: day, to: day + 86_400), site: site.id)
            } catch {
                healthError = "the gateway health report is not available: \(error)"
            }
            return Self.html(GatewaysPage.html(venue: hub.snapshot(), health: health, healthError: healthError))
        }
        router.get("/reports") { request, _ in
            let form = Self.form(request)
            guard request.uri.queryParameters.get("name") != nil else {
                return Self.html(ReportsPage.html(site: site.id, form: form, table: nil, error: nil))
            }
            do {
                let table = try await runReport(form)
                return Self.html(ReportsPage.html(site: site.id, form: form, table: table, error: nil))
            } catch {
                return Self.html(ReportsPage.html(site: site.id, form: form, table: nil, error: "\(error)"), status: .badRequest)
            }
        }
        router.get("/reports.csv") { request, _ in
            let form = Self.form(request)
            do {
                let table = try await runReport(form)
                let filename = "waymark-\(form.name)-\(form.from)-\(form.to).csv".filter { $0.isLetter || $0.isNumber || "-_.".contains($0) }
                return Response(status: .ok, headers: [.contentType: "text/csv; charset=utf-8",
                                                       .contentDisposition: "attachment; filename=\"\(filename)\""],
                                body: .init(byteBuffer: ByteBuffer(string: ReportFormatter.csv(table))))
            } catch {
                return Response(status: .badRequest, headers: [.contentType: "text/plain; charset=utf-8"],
                                body: .init(byteBuffer: ByteBuffer(string: "\(error)\n")))
            }
        }
    }

    static func form(_ request: Request) -> ReportsPage.Form {
        let q = request.uri.queryParameters
        let today = ISOTime.format(Date().timeIntervalSince1970).prefix(10)
        return ReportsPage.Form(name: q.get("name") ?? "traffic", from: q.get("from") ?? String(today), to: q.get("to") ?? String(today),
                                by: q.get("by") ?? "", region: q.get("region") ?? "")
    }

    func runReport(_ form: ReportsPage.Form) async throws -> ReportTable {
        guard ReportsPage.tableReports.contains(where: { $0.rawValue == form.name }) else {
            throw ReportError(.badArgument, "unknown report '\(form.name)'; choose one of \(ReportsPage.tableReports.map(\.rawValue).joined(separator: ", "))")
        }
        let request = try ReportRequest.parse(name: form.name, from: form.from, to: form.to,
                                              region: form.region.isEmpty ? nil : form.region, by: form.by.isEmpty ? nil : form.by)
        return try await database.report(request, site: site.id)
    }

    /// Server-sent events: the live state as JSON whenever it changed, checked every `pollInterval`.
    func eventStream() -> Response {
        let hub = self.hub, poll = pollInterval, keepAlive = keepAliveInterval
        let body = ResponseBody { writer in
            var sent = -1
            var quiet = Duration.zero
            try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
            // Ends with the connection (a write fails) or when the server shuts down.
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                let venue = hub.snapshot()
                if venue.version != sent {
                    sent = venue.version
                    quiet = .zero
                    try await writer.write(ByteBuffer(string: "data: \(Self.liveJSON(venue))\n\n"))
                } else if quiet >= keepAlive {
                    quiet = .zero
                    try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                }
                try await Task.sleep(for: poll)
                quiet += poll
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"], body: body)
    }

    /// `{"version":…,"devices":…,"occupancy":{region:n},"gateways":{gw:{"state":…,"spool_depth":…}}}`
    static func liveJSON(_ venue: LiveVenue) -> String {
        let occupancy = venue.occupancy.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.int($0.value)) }
        let gateways = venue.gateways.sorted { $0.key < $1.key }.map { id, g in
            (id, JSONValue.object([("state", .string(g.state)), ("spool_depth", .int(g.spoolDepth))]))
        }
        let aggregators = venue.aggregators.sorted { $0.key < $1.key }.map { key, a in
            (key, JSONValue.object([("state", .string(a.state)), ("shards", a.shards.map { .array($0.map { .int($0) }) } ?? .null),
                                    ("shard_count", a.shardCount.map { .int($0) } ?? .null)]))
        }
        return JSONValue.object([
            ("version", .int(venue.version)), ("devices", .int(venue.devices.count)),
            ("occupancy", .object(occupancy)), ("gateways", .object(gateways)), ("aggregators", .object(aggregators)),
        ]).rendered
    }
}
