import Foundation

extension EvaluationReport {
    /// A side-by-side table, Waymark next to the naive rule.
    public func table() -> String {
        func pct(_ v: Double) -> String { String(format: "%.1f %%", v * 100) }
        func secs(_ a: Double?, _ b: Double?) -> String {
            guard let a, let b else { return "—" }
            return String(format: "%.1f / %.1f", a, b)
        }
        func row(_ name: String, _ f: (SystemScore) -> String) -> String {
            let w = f(waymark)
            let n = naive.map(f) ?? "(needs --sightings)"
            return name.padded(to: 36) + w.leftPadded(to: 18) + "   " + n.leftPadded(to: 18)
        }
        var lines: [String] = []
        lines.append(String(format: "%d devices, %.1f device-hours, %d true visits; exit_delay_s %.0f",
                            devices, deviceHours, trueVisits, exitDelayS))
        lines.append("metric".padded(to: 36) + "Waymark".leftPadded(to: 18) + "   " + "naive".leftPadded(to: 18))
        lines.append(String(repeating: "-", count: 75))
        lines.append(row("current region, exact") { pct($0.accuracy) })
        lines.append(row("current region, within one hop") { pct($0.accuracyWithinHop) })
        lines.append(row("visit recall") { pct($0.visitRecall) })
        lines.append(row("visit precision") { pct($0.visitPrecision) })
        lines.append(row("visits recorded (inferred)") { "\($0.recordedVisits) (\($0.inferredVisits))" })
        lines.append(row("path accuracy") { pct($0.pathAccuracy) })
        lines.append(row("entry latency p50 / p95 (s)") { secs($0.entryLatencyP50, $0.entryLatencyP95) })
        lines.append(row("exit latency p50 / p95 (s)") { secs($0.exitLatencyP50, $0.exitLatencyP95) })
        lines.append(row("exit reported after p50 / p95 (s)") { secs($0.exitReportedP50, $0.exitReportedP95) })
        lines.append(row("  … into no region p50 / p95 (s)") {
            secs($0.exitToNoRegionReportedP50, $0.exitToNoRegionReportedP95) + " (\($0.exitToNoRegionReportLatencies.count))"
        })
        lines.append(row("live region published after p50 / p95 (s)") {
            $0.liveLatencies.isEmpty ? "–" : secs($0.liveLatencyP50, $0.liveLatencyP95)
        })
        lines.append(row("flaps per device-hour") { String(format: "%.2f", $0.flapsPerDeviceHour) })
        lines.append(row("  … between / in other / stationary") {
            "\($0.flapsBetweenRegions) / \($0.flapsInAnotherRegion) / \($0.flapsOfStationaryDevices)"
        })
        return lines.joined(separator: "\n")
    }

    /// The report as a JSON object (keys sorted, pretty-printed).
    public func json() -> String {
        struct Figures: Encodable {
            var current_region_accuracy: Double
            var current_region_accuracy_within_one_hop: Double
            var visit_recall: Double
            var visit_precision: Double
            var true_visits: Int
            var recorded_visits: Int
            var inferred_visits: Int
            var path_accuracy: Double
            var entry_latency_p50_s: Double?
            var entry_latency_p95_s: Double?
            var exit_latency_p50_s: Double?
            var exit_latency_p95_s: Double?
            var exit_reported_p50_s: Double?
            var exit_reported_p95_s: Double?
            var exit_into_no_region_reported_p50_s: Double?
            var exit_into_no_region_reported_p95_s: Double?
            var exits_into_no_region: Int
            var live_published_after_p50_s: Double?
            var live_published_after_p95_s: Double?
            var flaps: Int
            var flaps_per_device_hour: Double
            var flaps_between_regions: Int
            var flaps_in_another_region: Int
            var flaps_of_stationary_devices: Int
            init(_ s: SystemScore) {
                current_region_accuracy = s.accuracy
                current_region_accuracy_within_one_hop = s.accuracyWithinHop
                visit_recall = s.visitRecall
                visit_precision = s.visitPrecision
                true_visits = s.trueVisits
                recorded_visits = s.recordedVisits
                inferred_visits = s.inferredVisits
                path_accuracy = s.pathAccuracy
                entry_latency_p50_s = s.entryLatencyP50
                entry_latency_p95_s = s.entryLatencyP95
                exit_latency_p50_s = s.exitLatencyP50
                exit_latency_p95_s = s.exitLatencyP95
                exit_reported_p50_s = s.exitReportedP50
                exit_reported_p95_s = s.exitReportedP95
                exit_into_no_region_reported_p50_s = s.exitToNoRegionReportedP50
                exit_into_no_region_reported_p95_s = s.exitToNoRegionReportedP95
                exits_into_no_region = s.exitToNoRegionReportLatencies.count
                live_published_after_p50_s = s.liveLatencyP50
                live_published_after_p95_s = s.liveLatencyP95
                flaps = s.flaps
                flaps_per_device_hour = s.flapsPerDeviceHour
                flaps_between_regions = s.flapsBetweenRegions
                flaps_in_another_region = s.flapsInAnotherRegion
                flaps_of_stationary_devices = s.flapsOfStationaryDevices
            }
        }
        struct Document: Encodable {
            var devices: Int
            var device_hours: Double
            var true_visits: Int
            var exit_delay_s: Double
            var waymark: Figures
            var naive: Figures?
        }
        let doc = Document(devices: devices, device_hours: deviceHours, true_visits: trueVisits, exit_delay_s: exitDelayS,
                           waymark: Figures(waymark), naive: naive.map(Figures.init))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return (try? encoder.encode(doc)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

extension String {
    func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }

    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
