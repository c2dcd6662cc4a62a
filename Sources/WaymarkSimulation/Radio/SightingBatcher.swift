public import WaymarkCore

/// The sightings one gateway heard in one batching window, as the edge agent would publish them.
public struct SimulatedBatch: Hashable, Sendable {
    public var gateway: Int
    /// Boot id of the gateway's agent (a new one after each outage) and sequence number within it.
    public var boot: String
    public var seq: UInt64
    /// Window bounds by the gateway's clock, Unix seconds.
    public var start: Double
    public var end: Double
    /// In reported-time order.
    public var sightings: [SimulatedSighting]

    /// The batch in the edge → aggregator wire format: one entry per device with count and
    /// max/mean/last RSSI, in order of each device's first sighting.
    public func wireBatch(scenario: Scenario) -> SightingBatch {
        var order: [Int32] = []
        var entries: [Int32: SightingBatch.Entry] = [:]
        for s in sightings {
            let rssi = Double(s.rssi)
            if var e = entries[s.device] {
                e.rssiMean = (e.rssiMean * Double(e.count) + rssi) / Double(e.count + 1)
                e.count += 1
                e.rssiMax = max(e.rssiMax, rssi)
                e.rssiLast = rssi
                e.last = s.time
                entries[s.device] = e
            } else {
                let dev = scenario.devices[Int(s.device)]
                order.append(s.device)
                entries[s.device] = .init(device: dev.id, count: 1, rssiMax: rssi, rssiMean: rssi, rssiLast: rssi,
                                          tx: dev.advertisedPowerDBm, first: s.time, last: s.time)
            }
        }
        return SightingBatch(gateway: scenario.site.gateways[gateway].id, boot: boot, seq: seq, start: start, end: end,
                             sightings: order.map { entries[$0]! })
    }
}

/// Cuts a time-ordered sightings stream into per-gateway windows (`FaultPlan.batchWindowS`) and
/// applies the batch faults: duplicated batches and batches delivered after their successor.
/// Windows in which a gateway heard nothing produce no batch, unless `FaultPlan.emptyWindows`:
/// then each gateway sends every window while it is up, empty ones too.
public struct SightingBatcher: Sendable {
    public let scenario: Scenario
    private let window: Double
    private var open: [Int: SimulatedBatch] = [:]
    private var seq: [UInt64]
    private var bootNumber: [Int]
    private var held: [Int: SimulatedBatch] = [:]
    private var rng: SimulationRandom
    /// With empty windows: per gateway, the end of the last window sent (empty or not).
    private var sentUpTo: [Double]

    public init(scenario: Scenario) {
        self.scenario = scenario
        window = scenario.parameters.faults.batchWindowS
        seq = Array(repeating: 0, count: scenario.site.gateways.count)
        bootNumber = Array(repeating: 0, count: scenario.site.gateways.count)
        rng = SimulationRandom(seed: scenario.parameters.seed ^ 0xBA7C_4E55)
        sentUpTo = Array(repeating: scenario.parameters.start, count: scenario.site.gateways.count)
    }

    /// Adds sightings (later than all earlier ones) and returns the batches completed so far, in
    /// delivery order.
    public mutating func add(_ sightings: [SimulatedSighting]) -> [SimulatedBatch] {
        var closed: [SimulatedBatch] = []
        let origin = scenario.parameters.start
        for s in sightings {
            let g = Int(s.gateway)
            let k = ((s.time - origin) / window).rounded(.down)
            let start = origin + k * window
            if let b = open[g], b.start != start {
                closed.append(b)
                open[g] = nil
            }
            if open[g] == nil {
                open[g] = SimulatedBatch(gateway: g, boot: boot(g, at: start), seq: 0, start: start,
                                         end: start + window, sightings: [])
            }
            open[g]!.sightings.append(s)
        }
        // A window is complete once a later sighting of any gateway has arrived.
        if let last = sightings.last?.time {
            for (g, b) in open where b.end <= last {
                closed.append(b)
                open[g] = nil
            }
            if scenario.parameters.faults.emptyWindows { closed = withEmptyWindows(closed, upTo: last) }
        }
        return deliver(closed)
    }

    /// Closes every open window and releases held batches.
    public mutating func finish() -> [SimulatedBatch] {
        var last = Array(open.values)
        if scenario.parameters.faults.emptyWindows {
            last = withEmptyWindows(last, upTo: scenario.parameters.start + scenario.parameters.duration)
        }
        var out = deliver(last)
        open = [:]
        for g in held.keys.sorted() { out.append(held[g]!) }
        held = [:]
        return out
    }

    /// `closed` and, for each gateway, an empty batch for every complete window (ending by `end`)
    /// that it sends nothing else for while it is up.
    private mutating func withEmptyWindows(_ closed: [SimulatedBatch], upTo end: Double) -> [SimulatedBatch] {
        var out = closed
        var sent = Dictionary(grouping: closed, by: \.gateway).mapValues { Set($0.map(\.start)) }
        for g in sentUpTo.indices {
            var start = sentUpTo[g]
            while start + window <= end + 1e-9 {
                let up = !scenario.outages[g].contains { $0.contains(start) || $0.contains(start + window) }
                if up && sent[g]?.contains(start) != true && open[g]?.start != start {
                    out.append(SimulatedBatch(gateway: g, boot: boot(g, at: start), seq: 0, start: start, end: start + window, sightings: []))
                }
                sent[g, default: []].insert(start)
                start += window
            }
            sentUpTo[g] = start
        }
        return out
    }

    private mutating func boot(_ g: Int, at time: Double) -> String {
        let restarts = scenario.outages[g].filter { $0.upperBound <= time }.count
        if restarts != bootNumber[g] { bootNumber[g] = restarts; seq[g] = 0 }
        return "sim-\(scenario.parameters.seed)-\(g)-\(restarts)"
    }

    private mutating func deliver(_ batches: [SimulatedBatch]) -> [SimulatedBatch] {
        var out: [SimulatedBatch] = []
        let faults = scenario.parameters.faults
        for var b in batches.sorted(by: { ($0.end, $0.gateway) < ($1.end, $1.gateway) }) {
            seq[b.gateway] += 1
            b.seq = seq[b.gateway]
            var emit = [b]
            if let h = held.removeValue(forKey: b.gateway) {
                emit.append(h)
            } else if faults.reorderRate > 0 && rng.chance(faults.reorderRate) {
                held[b.gateway] = b
                emit = []
            }
            for e in emit {
                out.append(e)
                if faults.duplicateRate > 0 && rng.chance(faults.duplicateRate) { out.append(e) }
            }
        }
        return out
    }
}
