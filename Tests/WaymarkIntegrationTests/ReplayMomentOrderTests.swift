import Foundation
import Testing

/// Readings of one moment come in whatever order the gateways' messages raced in (or a recording
/// listed its receivers in); `waymark replay` hands them to the engine in the site file's gateway
/// order, as the aggregator's reorder stage releases equal window ends, so the history is the same
/// whichever order a file holds (docs/accuracy.md, "A moment's readings in the site's gateway
/// order"; `tools/robustness/shuffle.py` measures it at scale).
@Suite("waymark replay: the order of a moment's readings")
struct ReplayMomentOrderTests {
    @Test("a moment's lines in another gateway order give the same output, byte for byte")
    func gatewayOrderWithinAMoment() throws {
        let repo = DeployEnvironment.repositoryRoot
        let waymark = try DemoTests.binary("waymark", repo: repo)
        let dir = try DeployEnvironment.temporaryDirectory("replay-order")
        defer { try? FileManager.default.removeItem(at: dir) }
        let site = repo.appendingPathComponent("deploy/examples/museum.yaml").path
        let simulated = dir.appendingPathComponent("s.jsonl").path
        // Enough devices that the shared self-calibration carries a difference in one device's
        // arrival to the others (30 devices, 20 minutes: 80 of 515 recorded location lines
        // differed before the replay ordered a moment's lines).
        let sim = try AggregatorProcesses.run([waymark, "simulate", "--site", site, "--devices", "30", "--duration", "20m",
                                               "--seed", "1", "--sightings", simulated, "--quiet"])
        #expect(sim.status == 0, "\(sim.output)")

        // The readings on a 1/3-s grid, so that many share a moment; each moment's lines grouped by
        // gateway, the gateways in ascending and in descending order of their ids (each gateway's
        // own lines keep their order: a gateway sends them in sequence).
        var moments: [(t: Double, lines: [(gateway: String, json: String)])] = []
        for text in try String(contentsOfFile: simulated, encoding: .utf8).split(separator: "\n") {
            var object = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            let t = (try #require(object["t"] as? Double) * 3).rounded(.down) / 3
            object["t"] = (t * 1000).rounded() / 1000
            let json = String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
            let gateway = try #require(object["gateway"] as? String)
            if let last = moments.indices.last, moments[last].t == t {
                moments[last].lines.append((gateway, json))
            } else {
                moments.append((t, [(gateway, json)]))
            }
        }
        func write(_ name: String, descending: Bool) throws -> String {
            var out = ""
            for moment in moments {
                let order = moment.lines.indices.sorted {
                    let (a, b) = (moment.lines[$0].gateway, moment.lines[$1].gateway)
                    return a == b ? $0 < $1 : (descending ? a > b : a < b)
                }
                for i in order { out += moment.lines[i].json + "\n" }
            }
            let path = dir.appendingPathComponent(name).path
            try out.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let ascending = try write("ascending.jsonl", descending: false)
        let descending = try write("descending.jsonl", descending: true)
        #expect(try String(contentsOfFile: ascending, encoding: .utf8) != String(contentsOfFile: descending, encoding: .utf8))

        var outputs: [String] = []
        for input in [ascending, descending] {
            let output = input.replacingOccurrences(of: ".jsonl", with: ".out.jsonl")
            let replay = try AggregatorProcesses.run([waymark, "replay", "--site", site, "--input", input, "--output", output])
            #expect(replay.status == 0, "\(replay.output)")
            outputs.append(try String(contentsOfFile: output, encoding: .utf8))
        }
        let (a, b) = (outputs[0].split(separator: "\n"), outputs[1].split(separator: "\n"))
        #expect(a.filter { $0.contains(#""type":"location""#) }.count > 100, "the replay recorded the devices' moves")
        let first = a.indices.first { $0 < b.count && a[$0] != b[$0] } ?? (a.count == b.count ? nil : min(a.count, b.count))
        let differing = Set(a).symmetricDifference(Set(b)).count
        #expect(first == nil, "the same readings in another order gave another output: \(a.count) and \(b.count) lines, \(differing) in only one of them, the first difference at line \((first ?? 0) + 1)")
    }
}
