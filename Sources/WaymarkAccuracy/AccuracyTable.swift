import Foundation
import WaymarkSimulation

extension AccuracySuite {
    /// The rows as one Markdown table: every figure as "Waymark / naive".
    public static func table(_ rows: [Row]) -> String {
        func pct(_ v: Double) -> String { String(format: "%.1f", v * 100) }
        func secs(_ v: Double?) -> String { v.map { String(format: "%.1f", $0) } ?? "—" }
        func pair(_ r: Row, _ f: (SystemScore) -> String) -> String { "\(f(r.waymark)) / \(f(r.naive))" }
        var lines = [
            "| data | radio | devices | device-h | exact % | within one hop % | visit precision % | visit recall % | flaps / device-h | entry latency p50 (s) | exit latency p50 (s) |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in rows {
            let cells = [
                r.data, r.radio, "\(r.devices)", String(format: "%.1f", r.deviceHours),
                pair(r) { pct($0.accuracy) }, pair(r) { pct($0.accuracyWithinHop) },
                pair(r) { pct($0.visitPrecision) }, pair(r) { pct($0.visitRecall) },
                pair(r) { String(format: "%.2f", $0.flapsPerDeviceHour) },
                pair(r) { secs($0.entryLatencyP50) }, pair(r) { secs($0.exitLatencyP50) },
            ]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n") + "\n\nEach cell: Waymark (`waymark replay`, default fusion parameters) / naive rule (strongest reading in the last 2 s).\n"
    }

    /// The route rows as one Markdown table: every figure as "Waymark / naive".
    public static func routeTable(_ rows: [RouteRow]) -> String {
        var lines = [
            "| data | radio | duration (s) | readings | true route (rooms) | recorded route (rooms) | edit distance | route accuracy % |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        for r in rows {
            let cells = [
                r.data, "real", String(format: "%.0f", r.durationS), "\(r.readings)", "\(r.waymark.trueRooms)",
                "\(r.waymark.recordedRooms) / \(r.naive.recordedRooms)", "\(r.waymark.editDistance) / \(r.naive.editDistance)",
                String(format: "%.1f / %.1f", r.waymark.accuracy * 100, r.naive.accuracy * 100),
            ]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n") + "\n\nRoutes without timing: rooms in the order walked through (consecutive repeats merged); "
            + "edit distance is Levenshtein's; route accuracy 1 − edit distance ÷ the longer route. Each cell: Waymark / naive rule.\n"
    }

    /// The rows as JSON, keys sorted: an array of the rows, or with `routes` an object
    /// `{"rows": […], "routes": […]}`.
    public static func json(_ rows: [Row], routes: [RouteRow]? = nil) -> String {
        struct Figures: Encodable {
            var exact: Double, within_one_hop: Double, visit_precision: Double, visit_recall: Double
            var flaps_per_device_hour: Double
            var entry_latency_p50_s: Double?, entry_latency_p95_s: Double?, exit_latency_p50_s: Double?, exit_latency_p95_s: Double?
            var true_visits: Int, recorded_visits: Int
            init(_ s: SystemScore) {
                exact = s.accuracy; within_one_hop = s.accuracyWithinHop
                visit_precision = s.visitPrecision; visit_recall = s.visitRecall
                flaps_per_device_hour = s.flapsPerDeviceHour
                entry_latency_p50_s = s.entryLatencyP50; entry_latency_p95_s = s.entryLatencyP95
                exit_latency_p50_s = s.exitLatencyP50; exit_latency_p95_s = s.exitLatencyP95
                true_visits = s.trueVisits; recorded_visits = s.recordedVisits
            }
        }
        struct Line: Encodable {
            var data: String, radio: String, devices: Int, device_hours: Double, true_visits: Int
            var waymark: Figures, naive: Figures
        }
        struct Route: Encodable {
            var recorded_rooms: Int, edit_distance: Int, route_accuracy: Double
            init(_ s: RouteScore) { recorded_rooms = s.recordedRooms; edit_distance = s.editDistance; route_accuracy = s.accuracy }
        }
        struct RouteLine: Encodable {
            var data: String, duration_s: Double, readings: Int, true_rooms: Int
            var waymark: Route, naive: Route
        }
        struct Both: Encodable { var rows: [Line], routes: [RouteLine] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let lines = rows.map {
            Line(data: $0.data, radio: $0.radio, devices: $0.devices, device_hours: $0.deviceHours, true_visits: $0.trueVisits,
                 waymark: Figures($0.waymark), naive: Figures($0.naive))
        }
        guard let routes else { return (try? encoder.encode(lines)).map { String(decoding: $0, as: UTF8.self) } ?? "[]" }
        let routeLines = routes.map {
            RouteLine(data: $0.data, duration_s: $0.durationS, readings: $0.readings, true_rooms: $0.waymark.trueRooms,
                      waymark: Route($0.waymark), naive: Route($0.naive))
        }
        return (try? encoder.encode(Both(rows: lines, routes: routeLines))).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
