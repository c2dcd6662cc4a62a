import Foundation
import WaymarkConfig
import WaymarkCore
import WaymarkSimulation

/// Simulator speed on the example venue (deploy/examples/museum.yaml, run from the repository
/// root): 1,000 devices for one simulated hour at default physics, seed 1. Prints the time to draw
/// the scenario and truth, to generate every sighting, to encode them as JSONL in memory, and to
/// write the sightings file to a temporary directory with the buffered writer.
enum SimulateBenchmark {
    static func run() {
        let sitePath = "deploy/examples/museum.yaml"
        guard let site = try? SiteLoader.load(path: sitePath).site else {
            print("simulate: cannot load \(sitePath); run from the repository root")
            return
        }
        var p = SimulationParameters()
        p.deviceCount = 1000
        p.duration = 3600
        p.seed = 1

        var clock = ContinuousClock.now
        func lap() -> Double {
            let now = ContinuousClock.now
            defer { clock = now }
            return (now - clock).seconds
        }

        guard let scenario = try? Scenario(site: site, parameters: p) else { return print("simulate: bad parameters") }
        let truth = scenario.truth()
        let tScenario = lap()
        print(String(format: "simulate: scenario + truth for %d devices × 1 h: %.2f s (%d true visits)",
                     p.deviceCount, tScenario, truth.count))

        var generator = SightingGenerator(scenario: scenario)
        var count = 0
        while let chunk = generator.next() { count += chunk.count }
        let tGenerate = lap()
        print(String(format: "simulate: generate %d sightings: %.2f s (%.2f M sightings/s)",
                     count, tGenerate, Double(count) / tGenerate / 1e6))

        var encodeGenerator = SightingGenerator(scenario: scenario)
        let encoder = JSONLineEncoder(scenario: scenario)
        let capacity = 1 << 20
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        var used = 0
        var bytes = 0
        while let chunk = encodeGenerator.next() {
            for s in chunk {
                if used + encoder.maxSightingBytes > capacity { bytes += used; used = 0 }
                used += encoder.writeSighting(s, at: buffer + used)
            }
        }
        bytes += used
        let tEncode = lap()
        print(String(format: "simulate: generate + encode JSONL (%.0f MB, in memory): %.2f s", Double(bytes) / 1e6, tEncode))

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-bench-sightings.jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let counts = try SimulationOutput.writeSightings(scenario: scenario, path: path)
            let tWrite = lap()
            print(String(format: "simulate: generate + write %@ (%.0f MB): %.2f s (%.2f M sightings/s); total with scenario %.2f s",
                         path, Double(counts.bytes) / 1e6, tWrite, Double(counts.sightings) / tWrite / 1e6, tWrite + tScenario))
        } catch {
            print("simulate: \(error)")
        }
    }
}
