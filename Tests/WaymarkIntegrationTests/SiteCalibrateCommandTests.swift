import Foundation
import Testing
import WaymarkConfig
import WaymarkCore

/// `waymark site calibrate` as an operator runs it: the built binary over a recording, its table,
/// and `--write` leaving a site file that still loads and starts the engine from the values.
@Suite("waymark site calibrate (CLI)")
struct SiteCalibrateCommandTests {
    static let repo = DeployEnvironment.repositoryRoot

    /// The example open hall copied into `dir`, simulated (sightings and truth), with gw-b2's
    /// readings made 9 dB hot.
    static func hotRecording(_ waymark: String, in dir: URL, devices: Int, seed: Int) throws -> (site: String, sightings: String, truth: String) {
        let site = dir.appendingPathComponent("site.yaml").path
        try FileManager.default.copyItem(atPath: repo.appendingPathComponent("deploy/examples/open-hall.yaml").path, toPath: site)
        let sightings = dir.appendingPathComponent("s.jsonl").path, truth = dir.appendingPathComponent("t.jsonl").path
        let sim = try AggregatorProcesses.run([waymark, "simulate", "--site", site, "--devices", "\(devices)", "--duration", "10m",
                                               "--seed", "\(seed)", "--sightings", sightings, "--truth", truth, "--quiet"])
        #expect(sim.status == 0, "\(sim.output)")
        var lines = try String(contentsOfFile: sightings, encoding: .utf8).split(separator: "\n").map(String.init)
        for i in lines.indices where lines[i].contains(#""gateway":"gw-b2""#) {
            var o = try #require(JSONSerialization.jsonObject(with: Data(lines[i].utf8)) as? [String: Any])
            o["rssi"] = min(-1, (o["rssi"] as? Double ?? -80) + 9)
            lines[i] = String(decoding: try JSONSerialization.data(withJSONObject: o), as: UTF8.self)
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: sightings, atomically: true, encoding: .utf8)
        return (site, sightings, truth)
    }

    @Test("says so when the recording is mostly tags standing still")
    func standingTags() throws {
        let waymark = try DemoTests.binary("waymark", repo: Self.repo)
        let dir = try DeployEnvironment.temporaryDirectory("calibrate-standing")
        defer { try? FileManager.default.removeItem(at: dir) }
        let site = dir.appendingPathComponent("site.yaml").path
        try FileManager.default.copyItem(atPath: Self.repo.appendingPathComponent("deploy/examples/open-hall.yaml").path, toPath: site)
        let sightings = dir.appendingPathComponent("s.jsonl").path
        // Four tags that never move, for 20 minutes. Each stay teaches two minutes' worth; in the
        // open hall they flap between neighbouring cells every minute or three, and each flap
        // starts a stay again (4,800 device-seconds were worth 2,118 when this was written).
        let sim = try AggregatorProcesses.run([waymark, "simulate", "--site", site, "--devices", "4", "--duration", "20m",
                                               "--stationary-fraction", "1", "--seed", "3", "--sightings", sightings, "--quiet"])
        #expect(sim.status == 0, "\(sim.output)")
        let run = try AggregatorProcesses.run([waymark, "site", "calibrate", "--site", site, "--input", sightings])
        #expect(run.status == 0, "\(run.output)")
        let note = try #require(run.output.split(separator: "\n").first { $0.hasPrefix("(mostly tags standing still") }, "\(run.output)")
        let numbers = note.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        // "N device-seconds, together worth W": four tags for 20 minutes, worth under half of it.
        #expect(numbers.count >= 2 && numbers[0] > 4_000 && numbers[1] < numbers[0] / 2, "\(note)")
    }

    @Test("prints the learned calibration and writes a calibration: section that loads")
    func calibrateAndWrite() throws {
        let waymark = try DemoTests.binary("waymark", repo: Self.repo)
        let dir = try DeployEnvironment.temporaryDirectory("calibrate-cli")
        defer { try? FileManager.default.removeItem(at: dir) }
        // One gateway reads 9 dB hot: the calibration must find it and turn it down.
        let (site, sightings, _) = try Self.hotRecording(waymark, in: dir, devices: 8, seed: 5)

        let run = try AggregatorProcesses.run([waymark, "site", "calibrate", "--site", site, "--input", sightings, "--write"])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("measured-power correction"), "\(run.output)")
        #expect(!run.output.contains("mostly tags standing still"), "\(run.output)")
        let row = try #require(run.output.split(separator: "\n").first { $0.hasPrefix("gw-b2") }, "\(run.output)")
        let fields = row.split(separator: " ")
        let deviation = try #require(Double(fields[1]), "\(row)")
        #expect(deviation > 5, "gw-b2 reads 9 dB hot: \(row)")
        // readings, then the correction applied (negative: turned down), then its reliability.
        #expect(row.range(of: #"\d+   -\d+\.\d dB +\d+ %$"#, options: .regularExpression) != nil, "a correction is applied: \(row)")

        // The written file still loads, and carries the correction for gw-b2.
        let text = try String(contentsOfFile: site, encoding: .utf8)
        #expect(text.contains("# Waymark example venue"), "the rest of the file is kept")
        let (loaded, _) = try SiteLoader.load(path: site)
        let offset = try #require(loaded.calibration.gatewayOffsetsDB["gw-b2"])
        #expect(offset < -2)
        #expect(loaded.calibration.roomLossDB != nil && loaded.calibration.pathLossExponent != nil)

        // Running it again replaces the section instead of adding a second one.
        let again = try AggregatorProcesses.run([waymark, "site", "calibrate", "--site", site, "--input", sightings, "--write"])
        #expect(again.status == 0, "\(again.output)")
        let after = try String(contentsOfFile: site, encoding: .utf8)
        #expect(after.components(separatedBy: "\ncalibration:").count == 2)
    }

    @Test("a walk test's stays teach the calibration; a wrong truth file is refused with what to fix")
    func calibrateFromAWalkTest() throws {
        let waymark = try DemoTests.binary("waymark", repo: Self.repo)
        let dir = try DeployEnvironment.temporaryDirectory("calibrate-truth")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (site, sightings, truth) = try Self.hotRecording(waymark, in: dir, devices: 3, seed: 6)

        let run = try AggregatorProcesses.run([waymark, "site", "calibrate", "--site", site, "--input", sightings, "--truth", truth, "--write"])
        #expect(run.status == 0, "\(run.output)")
        let taught = try #require(run.output.split(separator: "\n").first { $0.hasPrefix("learned from") }, "\(run.output)")
        #expect(taught.contains("seconds of the stays in \(truth)"), "\(taught)")
        let row = try #require(run.output.split(separator: "\n").first { $0.hasPrefix("gw-b2") }, "\(run.output)")
        let deviation = try #require(Double(row.split(separator: " ")[1]), "\(row)")
        #expect(deviation > 5, "gw-b2 reads 9 dB hot: \(row)")
        let text = try String(contentsOfFile: site, encoding: .utf8)
        #expect(text.contains("seconds of the stays in \(truth)"), "the section says what taught it")
        let (loaded, _) = try SiteLoader.load(path: site)
        #expect(try #require(loaded.calibration.gatewayOffsetsDB["gw-b2"]) < -2)

        // The longest stay written down with the wrong region (across the hall): the command lists
        // it first among the stays to check (longest first).
        var stays = try String(contentsOfFile: truth, encoding: .utf8).split(separator: "\n").compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let longest = try #require(stays.indices.filter { stays[$0]["type"] as? String == "truth" }.max {
            let a = stays[$0], b = stays[$1]
            return (a["exited"] as! Double) - (a["entered"] as! Double) < (b["exited"] as! Double) - (b["entered"] as! Double)
        })
        let trueRegion = try #require(stays[longest]["region"] as? String)
        // cell-<row a–c><column 1–4>: the opposite row and half of the hall.
        let wrongRegion = trueRegion.hasPrefix("cell-")
            ? "cell-" + (trueRegion.dropFirst(5).first == "a" ? "c" : "a") + ((Int(String(trueRegion.suffix(1))) ?? 1) >= 3 ? "1" : "4")
            : "cell-a1"
        stays[longest]["region"] = wrongRegion
        let mislabelled = dir.appendingPathComponent("mislabelled.jsonl").path
        try stays.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }.joined(separator: "\n")
            .write(toFile: mislabelled, atomically: true, encoding: .utf8)
        let checked = try AggregatorProcesses.run([waymark, "site", "calibrate", "--site", site, "--input", sightings, "--truth", mislabelled])
        #expect(checked.status == 0, "\(checked.output)")
        #expect(checked.output.contains("stays in which the engine placed the tag elsewhere"), "\(checked.output)")
        let listed = checked.output.split(separator: "\n").drop { !$0.hasPrefix("stays in which") }.dropFirst().first
        #expect(listed?.hasPrefix("  \(wrongRegion) ") == true && listed?.contains(": there 0 % of its") == true, "\(checked.output)")
        #expect(!checked.output.contains("mac:") && !checked.output.contains("ibeacon:"), "no device ids in the output")

        // A region the site does not have: refused, naming it and the site's regions.
        let badRegion = dir.appendingPathComponent("bad-region.jsonl").path
        try #"{"type":"truth","device":"mac:02-00-00-00-00-01","region":"atrium","entered":1780304400,"exited":1780304460}"#
            .write(toFile: badRegion, atomically: true, encoding: .utf8)
        let refused = try AggregatorProcesses.run([waymark, "site", "calibrate", "--site", site, "--input", sightings, "--truth", badRegion])
        #expect(refused.status == 1)
        #expect(refused.output.contains("bad-region.jsonl:1: unknown region 'atrium'") && refused.output.contains("cell-a1"), "\(refused.output)")
        // Stays of a device the recording does not have: nothing can teach, and it says what to check.
        let otherDevice = dir.appendingPathComponent("other.jsonl").path
        try #"{"type":"truth","device":"mac:0a-00-00-00-00-99","region":"cell-a1","entered":"2026-06-01T09:00:00Z","exited":"2026-06-01T09:10:00Z"}"#
            .write(toFile: otherDevice, atomically: true, encoding: .utf8)
        let none = try AggregatorProcesses.run([waymark, "site", "calibrate", "--site", site, "--input", sightings, "--truth", otherDevice])
        #expect(none.status == 1)
        #expect(none.output.contains("of 600 covered") && none.output.contains("device ids and times"), "\(none.output)")
    }

    @Test("too short a recording is refused with what to do")
    func tooShort() throws {
        let waymark = try DemoTests.binary("waymark", repo: Self.repo)
        let dir = try DeployEnvironment.temporaryDirectory("calibrate-short")
        defer { try? FileManager.default.removeItem(at: dir) }
        let sightings = dir.appendingPathComponent("s.jsonl").path
        try #"{"t": 1780304400, "gateway": "gw-a1", "device": "mac:02-00-00-00-00-01", "rssi": -60}"#
            .write(toFile: sightings, atomically: true, encoding: .utf8)
        let site = Self.repo.appendingPathComponent("deploy/examples/open-hall.yaml").path
        let run = try AggregatorProcesses.run([waymark, "site", "calibrate", "--site", site, "--input", sightings])
        #expect(run.status == 1)
        #expect(run.output.contains("record longer"), "\(run.output)")
    }
}
