import ArgumentParser
import Foundation
import WaymarkConfig
import WaymarkCore
import WaymarkMQTT
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
        The radio (--radio): indoor (the default unless the site's simulation.radio says otherwise) is \
        fitted to a real recording, with walls between regions unless the site sets simulation.walls: \
        false; ideal is the original, kinder model; harsh a crowded venue. See docs/radio-model.md.
        Durations: 90s, 30m, 2h, 1h30m or seconds.

        With --publish mqtt://HOST:PORT the simulator also acts as the site's gateways: it publishes \
        the batches in the edge wire format (QoS 1, per-boot sequence numbers) to \
        waymark/v1/<site>/gateways/<gw>/sightings at --speedup times real time, keeps each batch until \
        the aggregator acks it (re-sending after --resend-after seconds), and maintains each gateway's \
        retained status (offline during --offline outages and at the end). Unless --start is given, \
        the simulated period is placed so that it ends when the publishing does: batch times are \
        never ahead of the wall clock. With --shards N (several aggregators, docs/scaling.md) each \
        window goes out as one batch per shard on …/sightings/<shard>, acked per shard, as \
        waymark-edge with publish.shards N sends it.
        """)

    @Option(help: "The site file (YAML).") var site: String
    @Option(help: "Number of devices.") var devices: Int = 100
    @Option(help: "Simulated period, e.g. 90s, 30m, 2h.") var duration: String = "1h"
    @Option(help: "Random seed.") var seed: UInt64 = 1
    @Option(help: "Start of the period: Unix seconds or ISO-8601 (default 2026-06-01T09:00:00Z).") var start: String?
    @Option(help: "Where to write the sightings (JSONL); optional with --publish.") var sightings: String?
    @Option(help: "Where to write the ground truth (JSONL).") var truth: String?
    @Option(help: "Also write the per-gateway batches in the edge wire format (JSONL, one SightingBatch per line).")
    var batches: String?

    @Option(help: "Arrivals over the period: uniform, peaked, peaked:PEAK:WIDTH (fractions of the period) or start.")
    var arrivals: String = "uniform"
    @Option(help: "Fraction of devices that never move (staff tags, forgotten badges).") var stationaryFraction: Double?
    @Option(help: "Median dwell at a destination (duration).") var dwellMedian: String?
    @Option(help: "Mean number of destinations per visit.") var meanStops: Double?

    @Option(help: "Radio profile: ideal (the original, kind model), indoor (fitted to a real recording; the default) or harsh (a crowded venue). Default: the site's simulation.radio, else indoor. The options below adjust the chosen profile. See docs/radio-model.md.")
    var radio: String?
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
    @Flag(help: "Every gateway sends a batch for every window while it is up, empty when it heard nothing, as waymark-edge does on a live radio (by default only windows with sightings, as a replaying edge).")
    var emptyWindows = false
    @Option(help: "Act as the site's gateways: publish the batches to this broker (mqtt://[user:password@]HOST:PORT, mqtts:// for TLS).")
    var publish: String?
    @Option(help: "With --publish: simulated seconds per real second (1 = real time, 0 = as fast as possible).")
    var speedup: Double = 1
    @Option(help: "With --publish: topic prefix (default waymark/v1/<site id>).") var topicPrefix: String?
    @Option(help: "With --publish: CA certificate file for an mqtts:// broker.") var cafile: String?
    @Option(help: "With --publish: re-send a batch the aggregator has not acked after this many seconds.")
    var resendAfter: Double = 30
    @Option(help: "With --publish: at the end, wait this many seconds for the aggregator's acks.") var ackWait: Double = 60
    @Option(help: "With --publish: the site's shard count (publish.shards of waymark-edge; 1 = unsharded).")
    var shards: Int = 1
    @Flag(help: "No progress on stderr.") var quiet = false

    func run() throws {
        let loaded = try loadSiteOrExit(site)
        var parameters = try makeParameters(site: loaded)
        if let publish {
            guard batches == nil else { throw ValidationError("--batches and --publish cannot be combined; run them separately") }
            guard speedup >= 0, speedup.isFinite else { throw ValidationError("--speedup must be 0 (as fast as possible) or more") }
            guard resendAfter > 0, ackWait >= 0 else { throw ValidationError("--resend-after must be > 0 and --ack-wait ≥ 0") }
            guard ShardLayout(count: shards) != nil else {
                throw ValidationError("--shards must be 1 (unsharded) … \(ShardLayout.maxCount), the aggregators' shards.count")
            }
            if start == nil {
                let now = Date().timeIntervalSince1970.rounded(.down)
                parameters.start = speedup > 0 ? now - parameters.duration * (1 - 1 / max(speedup, 1)) : now - parameters.duration
            }
            return try runPublishing(loaded, parameters, url: publish)
        }
        guard shards == 1 else { throw ValidationError("--shards needs --publish (files hold whole windows; the aggregators split them)") }
        guard let sightings else { throw ValidationError("--sightings FILE is required (unless --publish is given)") }
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

    /// `--publish`: the scenario's batches go to the broker as its gateways would send them.
    func runPublishing(_ loaded: Site, _ parameters: SimulationParameters, url: String) throws {
        var connection = try MQTTConnection(url: url)
        if let cafile {
            connection.tls = connection.tls ?? .init()
            connection.tls?.caFile = cafile
        }
        let scenario: Scenario
        do { scenario = try Scenario(site: loaded, parameters: parameters) } catch {
            throw ValidationError(error.description)
        }
        if let truth { try SimulationOutput.writeTruth(scenario: scenario, path: truth) }
        var options = SimulatedGateways.Options(
            connection: connection, clientID: "waymark-simulate-\(ProcessInfo.processInfo.processIdentifier)",
            topicPrefix: topicPrefix, speedup: speedup, resendAfterS: resendAfter)
        options.shards = ShardLayout(count: shards) ?? .single
        let gateways = try SimulatedGateways(scenario: scenario, options: options)
        if !quiet {
            printError("simulate: publishing \(loaded.gateways.count) gateways to \(connection) under \(gateways.topics.prefix)/gateways/, "
                       + (speedup > 0 ? "\(speedup)× real time" : "as fast as possible"))
        }
        let began = Date()
        try gateways.begin()
        let counts = try SimulationOutput.streamBatches(
            scenario: scenario, sightingsPath: sightings,
            progress: quiet ? nil : { fraction in
                printError(String(format: "simulate: %3.0f %% of the period published", fraction * 100))
            },
            deliver: gateways.deliver)
        let summary = try gateways.finish(ackWaitS: ackWait)
        let elapsed = Date().timeIntervalSince(began)
        printError(String(
            format: "simulate: %d devices, %@ simulated: %d sightings in %d batches published in %.1f s; "
                + "acked %d, re-sent %d, dropped %d, unacked at the end %d",
            parameters.deviceCount, duration, counts.sightings, summary.published, elapsed,
            summary.acked, summary.resent, summary.dropped, summary.unacked))
        if summary.unacked > 0 {
            printError("""
                simulate: \(summary.unacked) batches were not acked by the aggregator within --ack-wait \(ackWait) s; \
                is waymark-aggregator running for site '\(loaded.id)' on this broker (same topic prefix)?
                """)
            throw ExitCode(2)
        }
    }

    func makeParameters(site: Site) throws -> SimulationParameters {
        var p = SimulationParameters()
        if let radio {
            guard let profile = RadioProfile(rawValue: radio) else {
                throw ValidationError("--radio '\(radio)' is not a radio profile; use one of \(RadioProfile.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            p.radio = RadioParameters(profile: profile, site: site)
        } else {
            p.radio = RadioParameters(profile: site.simulation.radio ?? .default, site: site)
        }
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
        p.faults.emptyWindows = emptyWindows
        return p
    }
}
