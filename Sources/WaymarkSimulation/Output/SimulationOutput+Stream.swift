import Foundation

extension SimulationOutput {
    /// Generates every batch of the scenario, in delivery order, and hands each to `deliver` (for
    /// `waymark simulate --publish`, which acts as the site's gateways); the sightings are also
    /// written to `sightingsPath` when one is given, exactly as ``writeSightings(scenario:path:batchesPath:progress:)``
    /// would write them. Errors thrown by `deliver` stop the run and are rethrown.
    public static func streamBatches(
        scenario: Scenario, sightingsPath: String?, progress: ((Double) -> Void)? = nil,
        deliver: (SimulatedBatch) throws -> Void
    ) throws -> Counts {
        let writer = try sightingsPath.map { p throws(OutputError) in try BufferedFileWriter(path: p) }
        let encoder = JSONLineEncoder(scenario: scenario)
        var generator = SightingGenerator(scenario: scenario)
        var batcher = SightingBatcher(scenario: scenario)
        var counts = Counts()
        var reported = 0.0

        func emit(_ batches: [SimulatedBatch]) throws {
            for b in batches {
                if let writer {
                    for s in b.sightings {
                        try writer.write(maxBytes: encoder.maxSightingBytes) { encoder.writeSighting(s, at: $0) }
                    }
                }
                counts.sightings += b.sightings.count
                counts.batches += 1
                try deliver(b)
            }
        }

        while let chunk = generator.next() {
            try emit(batcher.add(chunk))
            if let progress, generator.progress >= reported + 0.05 {
                reported = generator.progress
                progress(reported)
            }
        }
        try emit(batcher.finish())
        try writer?.close()
        counts.bytes = writer?.bytesWritten ?? 0
        return counts
    }
}
