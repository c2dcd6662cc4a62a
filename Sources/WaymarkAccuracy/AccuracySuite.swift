import Foundation
import WaymarkCore
public import WaymarkSimulation

/// The accuracy suite (docs/accuracy.md): `waymark replay` with the site's default fusion parameters
/// on every real recording with ground truth and on the simulated example venues under each radio
/// profile, each scored next to the naive rule (strongest reading in the last 2 s) by `Evaluator`.
public struct AccuracySuite: Sendable {
    public struct Options: Sendable {
        /// The checkout's root (deploy/examples/, tools/kolakowski/).
        public var repository: String
        /// Where generated sites, sightings, truth and replay output go.
        public var work: String
        /// The Kolakowski dataset folder (kolakowski-ble-rss-fingerprints-calib2021).
        public var kolakowski: String
        /// Short runs of the simulated venues (the test suite's version).
        public var short = false
        public var seed: UInt64 = 1
        /// Seconds between the tags' starts in the "together" row (`KolakowskiTogether`).
        public var togetherStaggerS = KolakowskiTogether.defaultStaggerS

        public init(repository: String, work: String, kolakowski: String, short: Bool = false) {
            self.repository = repository
            self.work = work
            self.kolakowski = kolakowski
            self.short = short
        }

        /// Devices and simulated seconds per simulated venue.
        public var simulatedDevices: Int { short ? 6 : 100 }
        public var simulatedDurationS: Double { short ? 600 : 3600 }
    }

    /// One line of the table.
    public struct Row: Sendable {
        public var data: String
        /// `real` or the radio profile of a simulated run.
        public var radio: String
        public var devices: Int
        public var deviceHours: Double
        public var trueVisits: Int
        public var waymark: SystemScore
        public var naive: SystemScore
    }

    /// A line of the routes table: a real recording whose only ground truth is the route walked.
    public struct RouteRow: Sendable {
        public var data: String
        /// Seconds from the first reading to the last.
        public var durationS: Double
        public var readings: Int
        public var waymark: RouteScore
        public var naive: RouteScore
    }

    /// The simulated venues: name and site file under the repository.
    public static let venues: [(name: String, site: String)] = [
        ("museum", "deploy/examples/museum.yaml"),
        ("open-hall", "deploy/examples/open-hall.yaml"),
    ]
    /// The real recordings: the Kolakowski runs.
    public static let recordings = ["test-robot", "calibration"]

    public let options: Options
    public let replay: ReplayRunner

    public init(options: Options, replay: ReplayRunner) {
        self.options = options
        self.replay = replay
    }

    /// Runs every row; `progress` gets one line per row as it starts.
    public func run(progress: (String) -> Void = { _ in }) throws -> [Row] {
        let fm = FileManager.default
        try fm.createDirectory(atPath: options.work, withIntermediateDirectories: true)
        var rows: [Row] = []
        // Real recordings.
        let (flat, flatPath) = try kolakowskiFlat()
        var recordings: [KolakowskiRecording] = []
        for name in Self.recordings {
            progress("kolakowski \(name) (real)")
            let recording = try KolakowskiRecording(name: name, directory: options.work + "/kolakowski",
                                                    dataset: options.kolakowski, repository: options.repository)
            recordings.append(recording)
            let truth = "\(options.work)/kolakowski-\(name).visits.jsonl"
            try recording.writeVisitTruth(to: truth)
            rows.append(try score(data: "kolakowski \(name)", radio: "real", site: flat, sitePath: flatPath,
                                  sightings: recording.sightingsPath, truth: truth, stem: "kolakowski-\(name)"))
        }
        // The same recordings as several tags at once (`KolakowskiTogether`).
        let name = KolakowskiTogether.name
        progress("kolakowski \(name) (real, the recordings' sessions as tags at once)")
        let truth = "\(options.work)/kolakowski-\(name).visits.jsonl"
        let together = try KolakowskiTogether(recordings: recordings, directory: options.work + "/kolakowski", truthPath: truth,
                                              staggerS: options.togetherStaggerS)
        rows.append(try score(data: "kolakowski \(name)", radio: "real", site: flat, sitePath: flatPath,
                              sightings: together.sightingsPath, truth: truth, stem: "kolakowski-\(name)"))
        // The same recordings with the flat drawn as an open plan (`KolakowskiOpenPlan`).
        let plan = try KolakowskiOpenPlan(flat: flat, recordings: recordings, path: options.work + "/kolakowski-open-plan.yaml")
        for recording in recordings {
            progress("kolakowski \(recording.name), \(KolakowskiOpenPlan.name) (real, one region per anchor)")
            let stem = "kolakowski-\(recording.name)-open-plan"
            let truth = "\(options.work)/\(stem).visits.jsonl"
            try plan.truth(recording).writeVisitTruth(to: truth)
            rows.append(try score(data: "kolakowski \(recording.name), \(KolakowskiOpenPlan.name)", radio: "real", site: plan.site,
                                  sitePath: plan.sitePath, sightings: recording.sightingsPath, truth: truth, stem: stem))
        }
        // Simulated venues under each radio profile.
        for venue in Self.venues {
            let sitePath = "\(options.work)/\(venue.name).geometry.yaml"
            let site = try GeometrySite.write(from: options.repository + "/" + venue.site, to: sitePath)
            for (name, radio) in Self.radios(site: site) {
                progress("\(venue.name) \(name) (simulated, \(options.simulatedDevices) devices, \(Int(options.simulatedDurationS)) s)")
                var p = SimulationParameters()
                p.deviceCount = options.simulatedDevices
                p.duration = options.simulatedDurationS
                p.seed = options.seed
                p.radio = radio
                let scenario: Scenario
                do { scenario = try Scenario(site: site, parameters: p) } catch { throw AccuracyError(error.description) }
                let stem = "\(venue.name)-\(name)"
                let sightings = "\(options.work)/\(stem).sightings.jsonl", truth = "\(options.work)/\(stem).truth.jsonl"
                try SimulationOutput.writeTruth(scenario: scenario, path: truth)
                _ = try SimulationOutput.writeSightings(scenario: scenario, path: sightings)
                rows.append(try score(data: venue.name, radio: name, site: site, sitePath: sitePath,
                                      sightings: sightings, truth: truth, stem: stem))
                if !options.short { try? fm.removeItem(atPath: sightings) }
            }
        }
        return rows
    }

    /// The Kolakowski flat reduced to its geometry (`GeometrySite`), written into the work folder:
    /// the site every real recording is replayed with.
    func kolakowskiFlat() throws -> (site: Site, path: String) {
        let path = options.work + "/kolakowski-flat.geometry.yaml"
        return (try GeometrySite.write(from: options.repository + "/deploy/examples/kolakowski-flat.yaml", to: path), path)
    }

    /// Scores the recordings whose ground truth is a route without times (the Kolakowski walking
    /// person): `waymark replay` with the geometry's default parameters, and the naive rule, each by
    /// how far its recorded route is from the true one (`RouteScore`).
    public func runRoutes(progress: (String) -> Void = { _ in }) throws -> [RouteRow] {
        try FileManager.default.createDirectory(atPath: options.work, withIntermediateDirectories: true)
        let (site, sitePath) = try kolakowskiFlat()
        progress("kolakowski \(KolakowskiWalk.name) (real, route only)")
        let walk = try KolakowskiWalk(directory: options.work + "/kolakowski", dataset: options.kolakowski, repository: options.repository)
        let stem = "kolakowski-\(KolakowskiWalk.name)"
        let output = "\(options.work)/\(stem).replay.jsonl"
        try replay.replay(site: sitePath, input: walk.sightingsPath, output: output, log: "\(options.work)/\(stem).replay.log")
        var route: [Int] = []
        for id in walk.route {
            guard let r = site.regionIndex(id) else {
                throw AccuracyError("\(stem): the route's room '\(id)' is not a region of \(sitePath); re-run tools/kolakowski/convert.py")
            }
            route.append(r)
        }
        var reader = EvaluationReader(site: site)
        do {
            let device = reader.devices.id(walk.device)
            let recorded = try reader.readReplayOutput(path: output)
            let naive = try reader.readNaive(sightingsPath: walk.sightingsPath)
            if reader.problemCount > 0 {
                throw AccuracyError("\(stem): \(reader.problemCount) unusable input lines, e.g. \(reader.problems.first ?? "")")
            }
            struct Timed: Decodable { var t: Double }
            let decoder = JSONDecoder()
            var first = Double.infinity, last = -Double.infinity, readings = 0
            try JSONLinesFile.forEachLine(path: walk.sightingsPath) { line, _ in
                guard !line.isEmpty, let t = try? decoder.decode(Timed.self, from: Data(buffer: line)).t else { return }
                first = min(first, t)
                last = max(last, t)
                readings += 1
            }
            func visits(_ run: RecordedRun) -> [ScoredVisit] { device < run.visits.count ? run.visits[device] : [] }
            return [RouteRow(data: "kolakowski \(KolakowskiWalk.name)", durationS: readings > 0 ? last - first : 0, readings: readings,
                             waymark: RouteScore(trueRoute: route, visits: visits(recorded)),
                             naive: RouteScore(trueRoute: route, visits: visits(naive)))]
        } catch let e as EvaluationInputError {
            throw AccuracyError(e.description)
        }
    }

    /// The radios each simulated venue is scored under: the three profiles, and `sparse` — the
    /// fitted radio with tags that advertise every 1–3 s and gateways that lose 60 % of the adverts
    /// they could hear (battery-saving tags, a scanner sharing its radio with Wi-Fi), where a
    /// gateway's silence says little.
    static func radios(site: Site) -> [(name: String, radio: RadioParameters)] {
        var sparse = RadioParameters(profile: .indoor, site: site)
        sparse.advertisingInterval = 1...3
        sparse.packetLoss = 0.6
        return RadioProfile.allCases.map { ($0.rawValue, RadioParameters(profile: $0, site: site)) } + [("sparse", sparse)]
    }

    /// Replays `sightings` and scores the output and the naive rule against `truth`.
    func score(data: String, radio: String, site: Site, sitePath: String, sightings: String, truth: String, stem: String) throws -> Row {
        let output = "\(options.work)/\(stem).replay.jsonl"
        try replay.replay(site: sitePath, input: sightings, output: output, log: "\(options.work)/\(stem).replay.log")
        var reader = EvaluationReader(site: site)
        do {
            var truthData = try reader.readTruth(path: truth)
            let recorded = try reader.readReplayOutput(path: output)
            let naive = try reader.readNaive(sightingsPath: sightings)
            if reader.problemCount > 0 {
                throw AccuracyError("\(stem): \(reader.problemCount) unusable input lines, e.g. \(reader.problems.first ?? "")")
            }
            truthData.ensureDevices(reader.devices.count)
            let evaluator = Evaluator(site: site)
            return Row(data: data, radio: radio, devices: truthData.presence.filter { !$0.isEmpty }.count,
                       deviceHours: truthData.deviceHours, trueVisits: truthData.visits.reduce(0) { $0 + $1.count },
                       waymark: evaluator.score(truth: truthData, run: recorded),
                       naive: evaluator.score(truth: truthData, run: naive))
        } catch let e as EvaluationInputError {
            throw AccuracyError(e.description)
        }
    }
}
