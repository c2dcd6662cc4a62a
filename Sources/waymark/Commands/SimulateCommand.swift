import ArgumentParser
import Foundation
import WaymarkConfig
import WaymarkCore
import WaymarkSimulation

/// `waymark simulate`: a venue of virtual gateways and visitors, with ground truth.
struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Simulate devices walking a venue and write what its gateways hear, with ground truth.",
        discussion: """
        Sightings are written in the replay JSONL format ({"t", "gateway", "device", "rssi", "tx"}), \
        sorted by time (unless batch faults are requested). The truth file holds one \
        {"type":"truth","device","region","entered","exited"} line per true visit (within radius_m of the \
        region's position, nearest region when several) and one {"type":"presence",…} line per device \
        (when it was in the venue). The same seed and options always give the same files.
        Durations: 90s, 30m, 2h, 1h30m or seconds.
        """)

    @Option(help: "The site file (YAML).") var site: String
    @Option(help: "Number of devices.") var devices: Int = 100
    @Option(help: "Simulated period, e.g. 90s, 30m, 2h.") var duration: String = "1h"
    @Option(help: "Random seed.") var seed: UInt64 = 1
    @Option(help: "Start of the period: Unix seconds or ISO-8601 (default 2026-06-01T09:00:00Z).") var start: String?
    @Option(help: "Where to write the sightings (JSONL).") var sightings: String
    @Option(help: "Where to write the ground truth (JSONL).") var truth: String?
    @Option(help: "Also write the per-gateway batches in the edge wire format (JSONL, one SightingBatch per line).")
    var batches: String?

    @Option(help: "Arrivals over the period: uniform, peaked, peaked:PEAK:WIDTH (fractions of the period) or start.")
    var arrivals: String = "uniform"
    @Option(help: "Fraction of devices that never move (staff tags, forgotten badges).") var stationaryFraction: Double?
    @Option(help: "Median dwell at a destination (duration).") var dwellMedian: String?
    @Option(help: "Mean number of destinations per visit.") var meanStops: Double?

    @Option(help: "Path-loss exponent of the simulated radio.") var pathLossExponent: Double?
    @Option(help: "Shadowing standard deviation (dB).") var shadowingSigma: Double?
    @Option(help: "Shadowing correlation time (s).") var shadowingCorrelation: Double?
    @Option(help: "Per-packet fading standard deviation (dB).") var packetJitter: Double?
    @Option(help: "Probability a gateway misses an advert it could hear.") var packetLoss: Double?
    @Option(help: "Advertising interval range in seconds, MIN-MAX (e.g. 0.1-1).") var advertisingInterval: String?
    @Option(help: "Receiver sensitivity (dBm).") var sensitivity: Double?

    @Option(help: "Gateway outage GATEWAY@FROM+LENGTH, e.g. gw-lobby@10m+5m (repeatable).") var offline: [String] = []
    @Option(help: "Gateway clock skew GATEWAY=SECONDS, e.g. gw-cafe=-4 (repeatable).") var clockSkew: [String] = []
    @Option(help: "Probability a batch is delivered twice.") var duplicateRate: Double = 0
    @Option(help: "Probability a batch is delivered after the next batch of its gateway.") var reorderRate: Double = 0
    @Flag(help: "No progress on stderr.") var quiet = false

    func run() throws {
        let loaded = try loadSiteOrExit(site)
        let parameters = try makeParameters()
        let began = Date()
        let scenario: Scenario
        do { scenario = try Scenario(site: loaded, parameters: parameters) } catch {
            throw ValidationError(error.description)
        }
        if let truth { try SimulationOutput.writeTruth(scenario: scenario, path: truth) }
        let counts = try SimulationOutput.writeSightings(
            scenario: scenario, path: sightings, batchesPath: batches,
            progress: quiet ? nil : { fraction in
                printError(String(format: "simulate: %3.0f %% of the period", fraction * 100))
            })
        let elapsed = Date().timeIntervalSince(began)
        printError(String(
            format: "simulate: %d devices, %@ simulated: %d sightings (%.1f MB) in %.1f s (%.0f sightings/s)%@",
            parameters.deviceCount, duration, counts.sightings, Double(counts.bytes) / 1e6, elapsed,
            Double(counts.sightings) / max(elapsed, 1e-9), counts.batches > 0 ? ", \(counts.batches) batches" : ""))
    }

    func makeParameters() throws -> SimulationParameters {
        var p = SimulationParameters()
        guard devices >= 0 else { throw ValidationError("--devices must be 0 or more") }
        p.deviceCount = devices
        guard let d = DurationText.seconds(duration), d > 0 else {
            throw ValidationError("--duration '\(duration)' is not a duration; write e.g. 90s, 30m, 2h or 1h30m")
        }
        p.duration = d
        p.seed = seed
        if let start {
            if let unix = Double(start) { p.start = unix } else if let date = ISO8601DateFormatter().date(from: start) {
                p.start = date.timeIntervalSince1970
            } else {
                throw ValidationError("--start '\(start)' is neither Unix seconds nor ISO-8601 like 2026-06-01T09:00:00Z")
            }
        }
        guard let a = ArrivalProfile(arrivals) else {
            throw ValidationError("--arrivals '\(arrivals)' is not a profile; use uniform, peaked, peaked:0.4:0.15 or start")
        }
        p.arrivals = a
        if let v = stationaryFraction {
            guard (0...1).contains(v) else { throw ValidationError("--stationary-fraction must be between 0 and 1") }
            p.movement.stationaryFraction = v
        }
        if let v = dwellMedian {
            guard let s = DurationText.seconds(v), s > 0 else { throw ValidationError("--dwell-median '\(v)' is not a duration") }
            p.movement.dwellMedianS = s
        }
        if let v = meanStops {
            guard v >= 1 else { throw ValidationError("--mean-stops must be at least 1") }
            p.movement.meanStops = v
        }
        if let v = pathLossExponent {
            guard v >= 1.5 && v <= 6 else { throw ValidationError("--path-loss-exponent must be between 1.5 and 6") }
            p.radio.pathLossExponent = v
        }
        if let v = shadowingSigma { guard v >= 0 else { throw ValidationError("--shadowing-sigma must be ≥ 0") }; p.radio.shadowingSigmaDB = v }
        if let v = shadowingCorrelation {
            guard v >= 0 else { throw ValidationError("--shadowing-correlation must be ≥ 0") }
            p.radio.shadowingCorrelationS = v
        }
        if let v = packetJitter { guard v >= 0 else { throw ValidationError("--packet-jitter must be ≥ 0") }; p.radio.packetJitterDB = v }
        if let v = packetLoss {
            guard v >= 0 && v < 1 else { throw ValidationError("--packet-loss must be in [0, 1)") }
            p.radio.packetLoss = v
        }
        if let v = sensitivity { p.radio.sensitivityDBm = v }
        if let v = advertisingInterval {
            let parts = v.split(separator: "-").compactMap { Double($0) }
            guard parts.count == 2 || parts.count == 1, parts.allSatisfy({ $0 > 0 }), parts[0] <= parts[parts.count - 1] else {
                throw ValidationError("--advertising-interval '\(v)' must be MIN-MAX seconds such as 0.1-1, or one value")
            }
            p.radio.advertisingInterval = parts[0]...parts[parts.count - 1]
        }
        for spec in offline {
            guard let at = spec.firstIndex(of: "@"), let plus = spec[at...].firstIndex(of: "+"),
                  let from = DurationText.seconds(String(spec[spec.index(after: at)..<plus])),
                  let length = DurationText.seconds(String(spec[spec.index(after: plus)...])), length > 0 else {
                throw ValidationError("--offline '\(spec)' must be GATEWAY@FROM+LENGTH, e.g. gw-lobby@10m+5m")
            }
            p.faults.outages.append(.init(gateway: String(spec[..<at]), from: from, to: from + length))
        }
        for spec in clockSkew {
            let parts = spec.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let s = Double(parts[1]), s.isFinite else {
                throw ValidationError("--clock-skew '\(spec)' must be GATEWAY=SECONDS, e.g. gw-cafe=-4")
            }
            p.faults.clockSkewS[String(parts[0])] = s
        }
        guard (0..<1).contains(duplicateRate), (0..<1).contains(reorderRate) else {
            throw ValidationError("--duplicate-rate and --reorder-rate must be in [0, 1)")
        }
        p.faults.duplicateRate = duplicateRate
        p.faults.reorderRate = reorderRate
        return p
    }
}
