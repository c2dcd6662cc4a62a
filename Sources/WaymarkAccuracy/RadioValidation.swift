import Foundation
public import WaymarkCore
import WaymarkSimulation

/// Same-geometry validation of a radio profile (docs/radio-model.md): the simulator drives the
/// Kolakowski robot's true path through the Kolakowski flat (deploy/examples/kolakowski-flat.yaml)
/// and its readings are compared with the real recording of that path: the naive rule's
/// current-region accuracy, and the quantiles of the RSSI residuals around the fitted path loss.
public struct RadioValidation: Sendable {
    /// Acceptance tolerances (issue 13).
    public static let accuracyTolerance = 0.03
    public static let quantileToleranceDB = 2.0
    public static let quantiles = [0.05, 0.25, 0.5, 0.75, 0.95]

    public struct Result: Sendable {
        public var run: String
        public var realNaive: Double
        /// Per seed.
        public var simulatedNaive: [Double]
        public var realQuantiles: [Double]
        public var simulatedQuantiles: [Double]
        public var realReadings: Int
        public var simulatedReadings: Int

        public var simulatedNaiveMean: Double { simulatedNaive.reduce(0, +) / Double(max(simulatedNaive.count, 1)) }
        public var accuracyGap: Double { simulatedNaiveMean - realNaive }
        public var worstQuantileGapDB: Double { zip(realQuantiles, simulatedQuantiles).map { abs($0 - $1) }.max() ?? 0 }
        public var passes: Bool {
            abs(accuracyGap) <= RadioValidation.accuracyTolerance && worstQuantileGapDB <= RadioValidation.quantileToleranceDB
        }
    }

    public let site: Site
    /// Anchor heights (m) by gateway index, and the tag's height: residuals use 3-D distance.
    public let gatewayHeightM: [Double]
    public let tagHeightM = 1.3
    /// The fitted path loss (tools/radio-fit/indoor.json).
    public let p1m: Double
    public let exponent: Double
    public let wallLossDB: Double
    public var profile: RadioProfile = .indoor
    public var seeds: [UInt64] = Array(1...20)

    /// Loads the geometry site, the anchors' heights from the dataset and the fit.
    public init(repository: String, work: String, kolakowski: String) throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: work, withIntermediateDirectories: true)
        site = try GeometrySite.write(from: repository + "/deploy/examples/kolakowski-flat.yaml", to: work + "/kolakowski-flat.geometry.yaml")
        let anchors = try String(contentsOfFile: kolakowski + "/anchors.csv", encoding: .utf8)
        var heights = Array(repeating: 2.0, count: site.gateways.count)
        for line in anchors.split(separator: "\n").dropFirst() {
            let f = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            if f.count >= 4, let z = Double(f[3]), let g = site.gatewayIndex("anchor-\(f[0])") { heights[g] = z }
        }
        gatewayHeightM = heights
        let fitPath = repository + "/tools/radio-fit/indoor.json"
        guard let data = fm.contents(atPath: fitPath),
              let fit = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let pl = fit["path_loss"] as? [String: Any], let p = pl["p1m_dbm"] as? Double, let n = pl["exponent"] as? Double,
              let w = pl["wall_loss_db"] as? Double else {
            throw AccuracyError("\(fitPath): no path_loss.p1m_dbm / exponent; run python3 tools/radio-fit/fit.py --json \(fitPath)")
        }
        p1m = p
        exponent = n
        wallLossDB = w
    }

    /// Validates on one converted recording; `work` holds the visit truth written for it.
    public func validate(_ recording: KolakowskiRecording, work: String) throws -> Result {
        let truthPath = "\(work)/kolakowski-\(recording.name).visits.jsonl"
        try recording.writeVisitTruth(to: truthPath)
        var reader = EvaluationReader(site: site)
        var truth = try reader.readTruth(path: truthPath)
        let device = reader.devices.id(KolakowskiRecording.device)
        truth.ensureDevices(reader.devices.count)
        let evaluator = Evaluator(site: site)
        let trajectory = recording.trajectory

        // Real.
        var naive = NaiveBaseline(site: site)
        var realResiduals: [Double] = []
        var cursor = 0
        struct Line: Decodable { var t: Double; var gateway: String; var rssi: Double }
        let decoder = JSONDecoder()
        try JSONLinesFile.forEachLine(path: recording.sightingsPath) { line, n in
            guard !line.isEmpty else { return }
            guard let s = try? decoder.decode(Line.self, from: Data(buffer: line)), let g = site.gatewayIndex(s.gateway) else {
                throw AccuracyError("\(recording.sightingsPath):\(n): not a sighting of a known gateway; re-run tools/kolakowski/convert.py")
            }
            naive.add(device: device, gateway: g, time: s.t, rssi: s.rssi)
            realResiduals.append(residual(rssi: s.rssi, gateway: g, at: trajectory.location(at: s.t, cursor: &cursor).position))
        }
        let realRun = naive.finish()
        let realNaive = evaluator.score(truth: truth, run: realRun).accuracy

        // Simulated, one run per seed.
        var simNaive: [Double] = []
        var simResiduals: [Double] = []
        guard let deviceID = DeviceID(KolakowskiRecording.device) else { throw AccuracyError("bad device id") }
        for seed in seeds {
            var p = SimulationParameters()
            p.seed = seed
            p.radio = RadioParameters(profile: profile, site: site)
            p.start = trajectory.arrival
            p.duration = trajectory.departure - trajectory.arrival + 1
            // The dataset's tag: one reading per anchor per 1/3-s slot at most (BLE adds 0–10 ms).
            let tag = SimulatedDevice(id: deviceID, trajectory: trajectory, isStationary: false,
                                      advertisingInterval: 1.0 / 3 - 0.005, measuredPowerDBm: p1m, advertisedPowerDBm: p1m)
            let scenario: Scenario
            do { scenario = try Scenario(site: site, parameters: p, devices: [tag]) } catch { throw AccuracyError(error.description) }
            var generator = SightingGenerator(scenario: scenario)
            var baseline = NaiveBaseline(site: site)
            var c = 0
            while let chunk = generator.next() {
                // Only readings at the recording's rows (within half a slot): no readings in its gaps.
                for s in chunk where recording.hasRow(near: s.time, within: 1.0 / 6) {
                    let g = Int(s.gateway)
                    baseline.add(device: device, gateway: g, time: s.time, rssi: Double(s.rssi))
                    simResiduals.append(residual(rssi: Double(s.rssi), gateway: g, at: trajectory.location(at: s.time, cursor: &c).position))
                }
            }
            let run = baseline.finish()
            simNaive.append(evaluator.score(truth: truth, run: run).accuracy)
        }
        realResiduals.sort()
        simResiduals.sort()
        return Result(run: recording.name, realNaive: realNaive, simulatedNaive: simNaive,
                      realQuantiles: Self.quantiles.map { SystemScore.percentile(realResiduals, $0) ?? .nan },
                      simulatedQuantiles: Self.quantiles.map { SystemScore.percentile(simResiduals, $0) ?? .nan },
                      realReadings: realResiduals.count, simulatedReadings: simResiduals.count / max(seeds.count, 1))
    }

    /// RSSI minus the fitted path loss at the 3-D distance from the gateway's anchor, with the wall
    /// loss when the gateway is not anchored at the region nearest the tag (as in the fit).
    func residual(rssi: Double, gateway g: Int, at position: Point) -> Double {
        let gw = site.gateways[g].position
        let dz = gatewayHeightM[g] - tagHeightM
        let d = ((position.x - gw.x) * (position.x - gw.x) + (position.y - gw.y) * (position.y - gw.y) + dz * dz).squareRoot()
        let room = site.regions.indices.min { site.regions[$0].position.distance(to: position) < site.regions[$1].position.distance(to: position) }
        let wall = room.map { site.regionsByGateway[g].contains($0) } == true ? 0 : wallLossDB
        return rssi - (p1m - 10 * exponent * log10(max(d, 0.1)) - wall)
    }

    /// Real and simulated figures side by side.
    public static func report(_ results: [Result], profile: RadioProfile, seeds: Int) -> String {
        var lines = ["Same-geometry validation of the '\(profile.rawValue)' radio: the robot's true path simulated in the Kolakowski flat "
                     + "(\(seeds) seeds) vs the real recording.", ""]
        lines.append("| run | readings real / sim per seed | naive exact real | naive exact sim (mean, min–max) | gap (points, tolerance ±3) | residual q5 / q25 / q50 / q75 / q95 real (dB) | sim (dB) | worst gap (dB, tolerance 2) | passes |")
        lines.append("|---|---:|---:|---:|---:|---|---|---:|---|")
        for r in results {
            func q(_ v: [Double]) -> String { v.map { String(format: "%.1f", $0) }.joined(separator: " / ") }
            let lo = r.simulatedNaive.min() ?? .nan, hi = r.simulatedNaive.max() ?? .nan
            lines.append("| \(r.run) | \(r.realReadings) / \(r.simulatedReadings) | "
                         + String(format: "%.1f %%", r.realNaive * 100) + " | "
                         + String(format: "%.1f %% (%.1f–%.1f)", r.simulatedNaiveMean * 100, lo * 100, hi * 100) + " | "
                         + String(format: "%+.1f", r.accuracyGap * 100) + " | \(q(r.realQuantiles)) | \(q(r.simulatedQuantiles)) | "
                         + String(format: "%.1f", r.worstQuantileGapDB) + " | \(r.passes ? "yes" : "NO") |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
