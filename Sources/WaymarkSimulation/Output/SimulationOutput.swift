import Foundation

/// Runs a scenario to files: the sightings stream (and optionally the per-gateway batches) and the
/// ground truth. The only place the simulator touches the file system.
public enum SimulationOutput {
    public struct Counts: Sendable {
        public var sightings = 0
        public var bytes = 0
        public var batches = 0
    }

    /// Writes truth lines (sorted by device, then time) and one presence line per device.
    public static func writeTruth(scenario: Scenario, path: String) throws(OutputError) {
        let writer = try BufferedFileWriter(path: path)
        let encoder = JSONLineEncoder(scenario: scenario)
        var line: [UInt8] = []
        for (d, device) in scenario.devices.enumerated() {
            line.removeAll(keepingCapacity: true)
            encoder.appendPresence(device: d, entered: device.trajectory.arrival, exited: device.trajectory.departure,
                                   stationary: device.isStationary, to: &line)
            try writer.append(line)
        }
        for visit in scenario.truth() {
            line.removeAll(keepingCapacity: true)
            encoder.appendTruth(visit, to: &line)
            try writer.append(line)
        }
        try writer.close()
    }

    /// Generates every sighting of the scenario and writes it to `path`; with batch faults (or a
    /// `batchesPath`) the stream goes through `SightingBatcher` and is written in delivery order.
    /// `progress` is called with the fraction of the period done, about every 5 %.
    public static func writeSightings(
        scenario: Scenario, path: String, batchesPath: String? = nil, progress: ((Double) -> Void)? = nil
    ) throws(OutputError) -> Counts {
        let writer = try BufferedFileWriter(path: path)
        let batchWriter = try batchesPath.map { p throws(OutputError) in try BufferedFileWriter(path: p) }
        let encoder = JSONLineEncoder(scenario: scenario)
        var generator = SightingGenerator(scenario: scenario)
        let throughBatches = scenario.parameters.faults.changesBatches || batchWriter != nil
        var batcher = SightingBatcher(scenario: scenario)
        let json = JSONEncoder()
        json.outputFormatting = [.sortedKeys]
        var counts = Counts()
        var reported = 0.0

        func emit(_ batches: [SimulatedBatch]) throws(OutputError) {
            for b in batches {
                for s in b.sightings {
                    try writer.write(maxBytes: encoder.maxSightingBytes) { encoder.writeSighting(s, at: $0) }
                }
                counts.sightings += b.sightings.count
                counts.batches += 1
                if let batchWriter, let data = try? json.encode(b.wireBatch(scenario: scenario)) {
                    try batchWriter.append(Array(data) + [0x0A])
                }
            }
        }

        while let chunk = generator.next() {
            if throughBatches {
                try emit(batcher.add(chunk))
            } else {
                for s in chunk {
                    try writer.write(maxBytes: encoder.maxSightingBytes) { encoder.writeSighting(s, at: $0) }
                }
                counts.sightings += chunk.count
            }
            if let progress, generator.progress >= reported + 0.05 {
                reported = generator.progress
                progress(reported)
            }
        }
        if throughBatches { try emit(batcher.finish()) }
        try writer.close()
        try batchWriter?.close()
        counts.bytes = writer.bytesWritten
        return counts
    }
}
