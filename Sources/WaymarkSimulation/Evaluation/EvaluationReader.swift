public import WaymarkCore
import WaymarkJSON

/// Reads the evaluator's inputs: truth files from `waymark simulate`, output files from
/// `waymark replay`, and sightings files for the naive baseline. Lines that cannot be used are
/// counted and the first few described in `problems`; they never stop a run.
public struct EvaluationReader {
    public let site: Site
    public var devices = DeviceTable()
    /// Descriptions of unusable lines (at most `maxProblems`), and how many there were in all.
    public private(set) var problems: [String] = []
    public private(set) var problemCount = 0
    /// Region ids in output files that the site does not define, with how often they appeared.
    public private(set) var unknownRegions: [String: Int] = [:]
    public var maxProblems = 20

    public init(site: Site) { self.site = site }

    mutating func problem(_ path: String, _ line: Int, _ reason: String) {
        problemCount += 1
        if problems.count < maxProblems { problems.append("\(path):\(line): \(reason); line skipped") }
    }

    mutating func region(_ name: String) -> Int {
        if let r = site.regionIndex(name) { return r }
        unknownRegions[name, default: 0] += 1
        return -1
    }

    /// Reads `truth` and `presence` lines; other types are ignored.
    public mutating func readTruth(path: String) throws -> TruthData {
        var truth = TruthData()
        try JSONLinesFile.forEachLine(path: path) { line, n in
            guard !line.isEmpty else { return }
            guard let s = try? JSONObjectIndex(line) else { return problem(path, n, "not a JSON object") }
            guard let type = s.string("type") else { return problem(path, n, "no \"type\"") }
            guard let name = s.string("device") else { return problem(path, n, "no \"device\"") }
            // Unix seconds, or ISO-8601 with a zone as a walk test's stays are written by hand.
            func time(_ key: StaticString) -> Double? { s.number(key) ?? s.string(key).flatMap { UnixSeconds.parse(iso8601: $0) } }
            guard let entered = time("entered"), let exited = time("exited"), exited >= entered else {
                return problem(path, n, "\"entered\" and \"exited\" must be Unix seconds or ISO-8601 times with a zone, entered ≤ exited")
            }
            switch type {
            case "truth":
                guard let r = s.string("region") else { return problem(path, n, "no \"region\"") }
                let d = devices.id(name)
                truth.ensure(d)
                truth.visits[d].append(ScoredVisit(region: region(r), entered: entered, exited: exited))
            case "presence":
                let d = devices.id(name)
                truth.ensure(d)
                truth.presence[d].append(entered...exited)
                truth.stationary[d] = s.bool("stationary") ?? false
            default:
                return
            }
            truth.end = max(truth.end, exited)
        }
        for d in truth.visits.indices {
            truth.visits[d].sort { $0.entered < $1.entered }
            if truth.presence[d].isEmpty, let first = truth.visits[d].first, let last = truth.visits[d].last {
                truth.presence[d] = [first.entered...last.exited]
            }
        }
        return truth
    }

    /// Reads `location`, `live` and `visit` lines of `waymark replay` output; other types are ignored.
    public mutating func readReplayOutput(path: String) throws -> RecordedRun {
        var run = RecordedRun()
        try JSONLinesFile.forEachLine(path: path) { line, n in
            guard !line.isEmpty else { return }
            guard let s = try? JSONObjectIndex(line) else { return problem(path, n, "not a JSON object") }
            guard let type = s.string("type") else { return problem(path, n, "no \"type\"") }
            switch type {
            case "location", "live":
                guard let name = s.string("device"), let t = s.number("t") else {
                    return problem(path, n, "a \(type) line needs \"device\" and a numeric \"t\"")
                }
                let r: Int?
                if s.isNull("region") || s.raw("region") == nil { r = nil } else {
                    guard let id = s.string("region") else { return problem(path, n, "\"region\" must be a string or null") }
                    r = region(id)
                }
                let d = devices.id(name)
                run.ensure(d)
                if type == "live" {
                    run.live[d].append(LocationChange(t: t, region: r))
                } else {
                    run.locations[d].append(LocationChange(t: t, region: r))
                }
            case "visit":
                guard let name = s.string("device"), let id = s.string("region"),
                      let entered = s.number("entered"), let exited = s.number("exited") else {
                    return problem(path, n, "a visit line needs \"device\", \"region\", \"entered\" and \"exited\"")
                }
                let d = devices.id(name)
                run.ensure(d)
                run.visits[d].append(ScoredVisit(region: region(id), entered: entered, exited: max(entered, exited),
                                                 inferred: s.bool("inferred") ?? false, reportedAt: s.number("t")))
            default:
                return
            }
        }
        run.ensure(devices.count - 1)
        run.normalise()
        return run
    }

    /// Runs the naive rule over a sightings file (see `NaiveBaseline`).
    public mutating func readNaive(sightingsPath path: String, windowS: Double = 2) throws -> RecordedRun {
        var baseline = NaiveBaseline(site: site, windowS: windowS)
        // The rule reads each device's sightings in time order: a file out of order (several
        // gateways' files joined) is put in order first, as `waymark replay` does; equal times keep
        // the file's order.
        var readings: [(t: Double, device: Int, gateway: Int, rssi: Double)] = []
        var ordered = true
        try JSONLinesFile.forEachLine(path: path) { line, n in
            guard !line.isEmpty else { return }
            guard let s = try? JSONObjectIndex(line) else { return problem(path, n, "not a JSON object") }
            // A gateway status line (an outage replayed) is not a sighting.
            if s.string("status") != nil, s.string("device") == nil { return }
            guard let t = s.number("t") ?? s.string("t").flatMap(UnixSeconds.parse(iso8601:)), let gw = s.string("gateway"),
                  let name = s.string("device"), let rssi = s.number("rssi") else {
                return problem(path, n, "a sighting needs \"t\" (Unix seconds or ISO-8601), \"gateway\", \"device\" and numeric \"rssi\"")
            }
            guard let g = site.gatewayIndex(gw) else { return problem(path, n, "unknown gateway '\(gw)'") }
            if let last = readings.last, t < last.t { ordered = false }
            readings.append((t, devices.id(name), g, rssi))
        }
        if !ordered {
            readings = readings.enumerated().sorted { ($0.element.t, $0.offset) < ($1.element.t, $1.offset) }.map(\.element)
        }
        for r in readings { baseline.add(device: r.device, gateway: r.gateway, time: r.t, rssi: r.rssi) }
        var run = baseline.finish()
        run.ensure(devices.count - 1)
        run.normalise()
        return run
    }
}
