import Foundation
import WaymarkCore
import WaymarkSimulation

/// A recording of single readings cut into the batches an edge agent publishes, by the agent's
/// own `SightingWindower` (one per gateway, windows of `windowS` seconds aligned to multiples of
/// it). `waymark replay --batches` then feeds the engine as the aggregator does, one weighted
/// reading per device, gateway and window, where the suite's rows feed it every reading.
public enum EdgeWindows {
    struct Reading: Decodable {
        var t: Double
        var gateway: String
        var device: String
        var rssi: Double
        var tx: Double?
    }

    /// Writes `sightings` (JSONL readings) as batches to `path` (JSONL, one `SightingBatch` a
    /// line, in order of window, then gateway); returns how many.
    @discardableResult
    public static func write(sightings: String, to path: String, windowS: Double = 1) throws -> Int {
        var readings: [Reading] = []
        let decoder = JSONDecoder()
        try JSONLinesFile.forEachLine(path: sightings) { line, n in
            guard !line.isEmpty else { return }
            do { readings.append(try decoder.decode(Reading.self, from: Data(buffer: line))) } catch {
                throw AccuracyError("\(sightings):\(n): not a sightings line ({\"t\", \"gateway\", \"device\", \"rssi\"})")
            }
        }
        var windowers: [String: SightingWindower] = [:]
        var batches: [SightingBatch] = []
        for r in readings.sorted(by: { $0.t < $1.t }) {
            guard let device = DeviceID(r.device) else { throw AccuracyError("\(sightings): '\(r.device)' is not a device id") }
            var windower = windowers[r.gateway] ?? SightingWindower(window: windowS, gateway: r.gateway, boot: "recording-\(r.gateway)")
            if let closed = windower.add(device: device, rssi: r.rssi, tx: r.tx, time: r.t) { batches.append(closed) }
            windowers[r.gateway] = windower
        }
        for var windower in windowers.values {
            if let last = windower.flush() { batches.append(last) }
        }
        batches.sort { ($0.start, $0.gateway) < ($1.start, $1.gateway) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var text = ""
        for batch in batches { text += String(decoding: try encoder.encode(batch), as: UTF8.self) + "\n" }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return batches.count
    }
}
