import Foundation
import WaymarkCore
import WaymarkSimulation

/// The demo's simulated venue on disk: one sightings replay file per gateway (what that gateway's
/// `waymark-edge --source replay:FILE` reads), the ground truth, and how many batches each
/// gateway will publish.
struct DemoVenue {
    /// Per gateway (site order): its replay file and the number of windows with sightings in it,
    /// which is the number of batches its edge publishes (edge windows are aligned to multiples of
    /// the window length in Unix time, and a window without tracked sightings sends nothing).
    var replayFiles: [String] = []
    var expectedBatches: [Int] = []
    var sightings = 0
    var truthPath = ""
    /// All gateways' sightings in time order (for `waymark replay`, the offline reference).
    var allSightingsPath = ""
    var start = 0.0
    var end = 0.0

    static let window = 1.0
    /// The first line of every replay file: a sighting of a gateway that does not exist at the
    /// period's start, skipped by every edge (counted as "other gateway") but setting the replay's
    /// pace, so that all edges map the same simulated time to the same moment.
    static let clockGateway = "demo-clock"

    /// Simulates `parameters` on `site` and writes the files under `directory`.
    static func write(site: Site, parameters: SimulationParameters, directory: String,
                      progress: (Double) -> Void) throws -> DemoVenue {
        let scenario: Scenario
        do { scenario = try Scenario(site: site, parameters: parameters) } catch {
            throw DemoError("cannot simulate the venue: \(error.description)")
        }
        var venue = DemoVenue(start: parameters.start, end: parameters.end)
        venue.truthPath = directory + "/truth.jsonl"
        do {
            try SimulationOutput.writeTruth(scenario: scenario, path: venue.truthPath)
            let folder = directory + "/replay"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            venue.allSightingsPath = directory + "/sightings.jsonl"
            let all = try BufferedFileWriter(path: venue.allSightingsPath)
            var writers: [BufferedFileWriter] = []
            for g in site.gateways {
                let path = "\(folder)/\(g.id).jsonl"
                let w = try BufferedFileWriter(path: path, capacity: 1 << 18)
                let t = String(format: "%.3f", parameters.start)
                let anchor = #"{"t":\#(t),"gateway":"\#(clockGateway)","device":"mac:00-00-00-00-00-00","rssi":-100}"#
                w.buffer.append(contentsOf: Array(anchor.utf8) + [0x0A])
                writers.append(w)
                venue.replayFiles.append(path)
            }
            venue.expectedBatches = Array(repeating: 0, count: site.gateways.count)
            var lastWindow = Array(repeating: -Double.infinity, count: site.gateways.count)
            let encoder = JSONLineEncoder(scenario: scenario)
            var generator = SightingGenerator(scenario: scenario)
            var reported = 0.0
            while let chunk = generator.next() {
                for s in chunk {
                    let g = Int(s.gateway)
                    encoder.appendSighting(s, to: &writers[g].buffer)
                    encoder.appendSighting(s, to: &all.buffer)
                    let w = (s.time / window).rounded(.down)
                    if w > lastWindow[g] {
                        // A later window closes the open one (one batch each); an earlier sighting
                        // would be counted into the open window, as the edge's windower does.
                        venue.expectedBatches[g] += 1
                        lastWindow[g] = w
                    }
                    try writers[g].flushIfFull()
                }
                try all.flushIfFull()
                venue.sightings += chunk.count
                if generator.progress >= reported + 0.1 {
                    reported = generator.progress
                    progress(reported)
                }
            }
            for w in writers { try w.close() }
            try all.close()
        } catch let error as OutputError {
            throw DemoError("cannot write the simulated venue: \(error.description)")
        }
        return venue
    }

    var totalBatches: Int { expectedBatches.reduce(0, +) }
}
