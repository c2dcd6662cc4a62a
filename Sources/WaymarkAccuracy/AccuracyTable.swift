import Foundation
public import WaymarkSimulation

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

    /// The rows as JSON (an array, keys sorted).
    public static func json(_ rows: [Row]) -> String {
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
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let lines = rows.map {
            Line(data: $0.data, radio: $0.radio, devices: $0.devices, device_hours: $0.deviceHours, true_visits: $0.trueVisits,
                 waymark: Figures($0.waymark), naive: Figures($0.naive))
        }
        return (try? encoder.encode(lines)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    }
}
