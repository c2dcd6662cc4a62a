import Foundation
import WaymarkCore
import WaymarkSimulation

/// A recording of single readings cut into the batches an edge agent publishes: per gateway and
/// window of `windowS` seconds (aligned to multiples of it, as the agent's are to its clock), one
/// entry per device with its count and mean, maximum and last RSSI, in order of each device's
/// first reading. `waymark replay --batches` then feeds the engine as the aggregator does, one
/// weighted reading per device, gateway and window, where the suite's rows feed it every reading.
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
        struct Window: Hashable { var start: Double; var gateway: String }
        var windows: [Window: [SightingBatch.Entry]] = [:]
        for r in readings.sorted(by: { $0.t < $1.t }) {
            guard let device = DeviceID(r.device) else { throw AccuracyError("\(sightings): '\(r.device)' is not a device id") }
            let key = Window(start: (r.t / windowS).rounded(.down) * windowS, gateway: r.gateway)
            var entries = windows[key, default: []]
            if let i = entries.firstIndex(where: { $0.device == device }) {
                let n = Double(entries[i].count)
                entries[i].rssiMean = (entries[i].rssiMean * n + r.rssi) / (n + 1)
                entries[i].count += 1
                entries[i].rssiMax = max(entries[i].rssiMax, r.rssi)
                entries[i].rssiLast = r.rssi
                entries[i].last = r.t
            } else {
                entries.append(.init(device: device, count: 1, rssiMax: r.rssi, rssiMean: r.rssi, rssiLast: r.rssi,
                                     tx: r.tx, first: r.t, last: r.t))
            }
            windows[key] = entries
        }
        var seq: [String: UInt64] = [:]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var text = ""
        for key in windows.keys.sorted(by: { ($0.start, $0.gateway) < ($1.start, $1.gateway) }) {
            seq[key.gateway, default: 0] += 1
            let batch = SightingBatch(gateway: key.gateway, boot: "recording-\(key.gateway)", seq: seq[key.gateway]!,
                                      start: key.start, end: key.start + windowS, sightings: windows[key]!)
            text += String(decoding: try encoder.encode(batch), as: UTF8.self) + "\n"
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return windows.count
    }
}
