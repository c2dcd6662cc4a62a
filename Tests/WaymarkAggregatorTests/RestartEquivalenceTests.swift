import Foundation
import Testing
import WaymarkConfig
import WaymarkCore
import WaymarkFusion
import WaymarkNotify
import WaymarkSimulation
@testable import WaymarkAggregator

/// Issue 19, in the pure core: an aggregator that is stopped and restarted — cleanly (SIGTERM) or
/// killed (SIGKILL, losing what it had not committed) — while the simulated gateways keep
/// publishing must store the same history as one that ran through. `RestartRig` plays the broker
/// (a persistent session that queues while the aggregator is down), PostgreSQL (the committed
/// rows, device checkpoints, marks and site-wide state, through the same encoders as the store)
/// and the gateways (spools that resend what is not acked, and answer resend requests).
@Suite struct RestartEquivalenceTests {
    @Test func idleStopsAndStartsChangeNothing() throws {
        let stream = try RestartRig.museumStream()
        let base = try RestartRig.run(stream, faults: [])
        #expect(base.visits.count > 30 && base.events.count > 300 && base.transitions.count > 10)
        #expect(base.notifications.count >= 30, "the museum's rules greet every device: \(base.notifications.count)")
        for kill in [false, true] {
            let stops = stride(from: 40.0, to: 280, by: 40).map { RestartRig.Fault(at: $0, kill: kill, downtime: 1.5, idle: true) }
            let stopped = try RestartRig.run(stream, faults: stops)
            #expect(stopped.restarts == stops.count)
            RestartRig.expectSame(stopped, base, minimum: 1.0)
        }
    }

    @Test func stopsMidStreamKeepTheHistory() throws {
        let stream = try RestartRig.museumStream()
        let base = try RestartRig.run(stream, faults: [])
        let stops = stride(from: 40.0, to: 280, by: 40).map { RestartRig.Fault(at: $0, kill: false, downtime: 3) }
        let stopped = try RestartRig.run(stream, faults: stops)
        RestartRig.expectSame(stopped, base, minimum: 0.995)
        #expect(stopped.resendsPerBatch <= 1.0)
    }

    @Test func killsMidStreamKeepTheHistory() throws {
        let stream = try RestartRig.museumStream()
        let base = try RestartRig.run(stream, faults: [])
        let kills = stride(from: 40.5, to: 280, by: 40).map { RestartRig.Fault(at: $0, kill: true, downtime: 2) }
        let killed = try RestartRig.run(stream, faults: kills)
        #expect(killed.gapsOpened > 0, "a kill loses batches taken but not committed: the rig must exercise gaps")
        #expect(killed.lostBatches == 0)
        RestartRig.expectSame(killed, base, minimum: 0.995)
        #expect(killed.resendsPerBatch <= 1.5)
    }

    /// The same with the devices split among three fusion workers (`fusion.workers`): each
    /// worker's calibration, clock and gateway health, and every device's state in its worker,
    /// come back from the checkpoint.
    @Test func killsWithSeveralFusionWorkersKeepTheHistory() throws {
        let stream = try RestartRig.museumStream()
        let base = try RestartRig.run(stream, faults: [], workers: 3)
        #expect(base.visits.count > 30 && base.events.count > 300)
        let kills = stride(from: 40.5, to: 280, by: 40).map { RestartRig.Fault(at: $0, kill: true, downtime: 2) }
        let killed = try RestartRig.run(stream, faults: kills, workers: 3)
        #expect(killed.gapsOpened > 0)
        #expect(killed.lostBatches == 0)
        RestartRig.expectSame(killed, base, minimum: 0.995)
        let idle = stride(from: 40.0, to: 280, by: 60).map { RestartRig.Fault(at: $0, kill: false, downtime: 1.5, idle: true) }
        RestartRig.expectSame(try RestartRig.run(stream, faults: idle, workers: 3), base, minimum: 1.0)
    }
}

struct RestartRig {
    /// `at`: seconds after the first batch. `idle`: the gateways pause (publish nothing) from a
    /// second before the stop until a second after the restart, so nothing is in flight.
    struct Fault { var at: Double; var kill: Bool; var downtime: Double; var idle = false }

    struct Message {
        var gateway: String
        var seq: UInt64
        var payload: [UInt8]
        var publishAt: Double
        /// A retained status (not spooled, not acked; the broker re-delivers the latest on subscribe).
        var isStatus = false
    }

    /// What "PostgreSQL" holds at the end, and what it took to get there.
    struct Outcome {
        var events: [WriteBatch.Event: Int] = [:]
        var visits: [FusionOutput.Visit: Int] = [:]
        var transitions: [FusionOutput.Transition: Int] = [:]
        var journeys: [FusionOutput.Journey: Int] = [:]
        /// Notification rows inserted, by id (the table's insert is idempotent on the id; here
        /// every insert is counted, so a notification sent again after a restart shows as 2).
        var notifications: [String: Int] = [:]
        var batchesStored = 0
        var restarts = 0
        var published = 0
        var resent = 0
        var gapsOpened = 0
        var lostBatches = 0
        var resendsPerBatch: Double { published == 0 ? 0 : Double(published + resent) / Double(published) }
    }

    static let topics = Topics(site: "demo-museum")

    /// The example museum, loaded once for every run and restart.
    static func museum() throws -> Site {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try SiteLoader.load(path: repo.appendingPathComponent("deploy/examples/museum.yaml").path).site
    }

    /// Five minutes of the example museum with 30 devices (its default, indoor radio), as the
    /// gateways publish it: each batch at the end of its window plus 0.2 s.
    static func museumStream() throws -> [Message] {
        let site = try museum()
        var p = SimulationParameters()
        p.seed = 19
        p.deviceCount = 30
        p.duration = 300
        p.arrivals = .atStart
        p.movement.dwellMedianS = 20
        let scenario = try Scenario(site: site, parameters: p)
        var out: [Message] = []
        let encoder = JSONEncoder()
        var boots: [String: String] = [:]
        _ = try SimulationOutput.streamBatches(scenario: scenario, sightingsPath: nil) { b in
            let wire = b.wireBatch(scenario: scenario)
            boots[wire.gateway] = wire.boot
            out.append(Message(gateway: wire.gateway, seq: wire.seq, payload: Array(try encoder.encode(wire)), publishAt: wire.end + 0.2))
        }
        // Every gateway's retained status, refreshed every 10 s as the edge (and the simulator) do.
        for t in stride(from: p.start, to: p.end, by: 10) {
            for gateway in site.gateways.map(\.id) {
                let status = GatewayStatus(state: .online, gateway: gateway, version: "rig", boot: boots[gateway], t: t)
                out.append(Message(gateway: gateway, seq: 0, payload: Array(try encoder.encode(status)), publishAt: t + 0.1, isStatus: true))
            }
        }
        return out.sorted { ($0.publishAt, $0.gateway) < ($1.publishAt, $1.gateway) }
    }

    static func makeCore(_ site: Site, workers: Int) -> AggregatorCore {
        var settings = AggregatorCore.Settings()
        settings.fusionWorkers = workers
        settings.reorderWindowS = 2  // the aggregator's default
        return AggregatorCore(site: site, topics: topics, settings: settings)
    }

    /// Runs the stream through an aggregator that suffers `faults`, flushing a write every second.
    static func run(_ stream: [Message], faults: [Fault], resendAfterS: Double = 5, workers: Int = 1) throws -> Outcome {
        var out = Outcome()
        let site = try museum()
        var core = makeCore(site, workers: workers)
        // The database.
        var checkpoints: [DeviceID: (ordinal: Int, bytes: [UInt8])] = [:]
        var notifierStates: [DeviceID: Data] = [:]
        var marks: [ProgressTracker.Key: UInt64] = [:]
        var state: Data?
        var statuses: [String: (at: Double, summary: StatusSummary)] = [:]  // gateway_status, latest per gateway
        // The gateways' spools: unacked batches by gateway and seq, with when they were last sent.
        var spool: [String: [UInt64: (message: Message, sentAt: Double)]] = [:]
        var queue: [Message] = []  // the broker's queue for the aggregator's session while it is down
        var up = true
        let t0 = stream.first!.publishAt
        var faults = faults.map { Fault(at: t0 + $0.at, kill: $0.kill, downtime: $0.downtime, idle: $0.idle) }.sorted { $0.at < $1.at }
        var pauses = faults.filter(\.idle).map { (from: $0.at - 1, length: $0.downtime + 2) }
        var pausedUntil = -Double.infinity
        var restartAt = Double.infinity
        var lastFlush = stream.first!.publishAt
        let end = stream.last!.publishAt + 30

        func commit(_ core: inout AggregatorCore) throws {
            guard let w = core.sealWrite() else { return }
            for e in w.events { out.events[e, default: 0] += 1 }
            for v in w.visits { out.visits[v, default: 0] += 1 }
            for t in w.transitions { out.transitions[t, default: 0] += 1 }
            for j in w.journeys { out.journeys[j, default: 0] += 1 }
            for n in w.notifications { out.notifications[n.id, default: 0] += 1 }
            for s in w.notifierStates { notifierStates[s.device] = try JSONEncoder().encode(s.state) }
            out.batchesStored += w.ingest.values.reduce(0) { $0 + $1.batches }
            for cp in w.checkpoints { checkpoints[cp.device] = (cp.ordinal, try CompactBinaryEncoder().encode(cp)) }
            for (k, v) in w.progress { marks[k] = max(marks[k] ?? 0, v) }
            state = try JSONEncoder().encode(w.aggregatorState)
            for s in w.statuses where s.receivedAt >= statuses[s.gateway]?.at ?? -.infinity {
                statuses[s.gateway] = (s.receivedAt, StatusSummary(state: s.status.state, boot: s.status.boot, reportedAt: s.status.t))
            }
            acks(core.committed(w))
        }
        func acks(_ publications: [Publication]) {
            for p in publications {
                guard let (gateway, kind) = topics.gateway(inTopic: p.topic), kind == "ack",
                      let ack = try? JSONDecoder().decode(GatewayAck.self, from: Data(p.payload)) else { continue }
                spool[gateway] = spool[gateway]?.filter { $0.key > ack.seq }
                for seq in ack.resendRange where spool[gateway]?[seq] != nil { spool[gateway]?[seq]?.sentAt = -.infinity }
            }
        }
        var retained: [String: Message] = [:]
        func deliver(_ m: Message, at t: Double, _ core: inout AggregatorCore, retain: Bool = false) {
            _ = core.handle(topic: m.isStatus ? topics.status(m.gateway) : topics.sightings(m.gateway), payload: m.payload,
                            receivedAt: t, retained: retain)
            core.releaseDue(at: t)
        }
        func restore() throws -> AggregatorCore {
            var c = makeCore(site, workers: workers)
            let decoder = CompactBinaryDecoder()
            // As the store loads them: in the engine's order (device_state.ordinal).
            let ordered = checkpoints.values.sorted { $0.ordinal < $1.ordinal }
            c.restore(devices: try ordered.map { try decoder.decode(DeviceCheckpoint.self, from: $0.bytes) },
                      progress: marks, state: try state.map { try JSONDecoder().decode(AggregatorCheckpoint.self, from: $0) },
                      statuses: statuses.mapValues(\.summary),
                      notifierStates: try notifierStates.map { NotifierCheckpoint(device: $0.key, state: try JSONDecoder().decode(NotifierDeviceState.self, from: $0.value)) })
            return c
        }

        var next = 0
        var now = stream.first!.publishAt
        let step = 0.05
        while now <= end {
            if let p = pauses.first, now >= p.from {
                pauses.removeFirst()
                pausedUntil = now + p.length  // then the backlog goes out at once, as a paused simulator catches up
            }
            // Gateways publish what is due now, and resend what is overdue or asked for.
            while now >= pausedUntil && next < stream.count && stream[next].publishAt <= now {
                let m = stream[next]
                if m.isStatus {
                    retained[m.gateway] = m
                    if up { deliver(m, at: now, &core) } else { queue.append(m) }
                    next += 1
                    continue
                }
                spool[m.gateway, default: [:]][m.seq] = (m, now)
                out.published += 1
                if up { deliver(m, at: now, &core) } else { queue.append(m) }
                next += 1
            }
            for gateway in spool.keys.sorted() where now >= pausedUntil {
                for seq in spool[gateway]!.keys.sorted() {
                    guard let entry = spool[gateway]?[seq], now - entry.sentAt >= resendAfterS else { continue }
                    spool[gateway]?[seq]?.sentAt = now
                    out.resent += 1
                    if up { deliver(entry.message, at: now, &core) } else { queue.append(entry.message) }
                }
            }
            if up {
                core.releaseDue(at: now)
                acks(core.takePublications())
                if now - lastFlush >= 1 {
                    lastFlush = now
                    try commit(&core)
                }
                if let f = faults.first, now >= f.at {
                    faults.removeFirst()
                    if !f.kill {
                        core.releaseAll()  // SIGTERM: what was taken in is committed and acked
                        try commit(&core)
                    }
                    out.gapsOpened += core.gapsOpened
                    up = false
                    restartAt = now + f.downtime
                }
            }
            if !up && now >= restartAt {
                core = try restore()
                out.restarts += 1
                up = true
                // On subscribe the broker hands over each gateway's retained status, then the queue.
                for gateway in retained.keys.sorted() { deliver(retained[gateway]!, at: now, &core, retain: true) }
                for m in queue { deliver(m, at: now, &core) }
                queue.removeAll()
            }
            now += step
        }
        core.releaseAll()
        try commit(&core)
        out.gapsOpened += core.gapsOpened
        out.lostBatches = core.progress.skipped
        return out
    }

    /// Fraction of rows the two runs share (multiset intersection over the larger side).
    static func agreement<T: Hashable>(_ a: [T: Int], _ b: [T: Int]) -> Double {
        let common = a.reduce(0) { $0 + min($1.value, b[$1.key] ?? 0) }
        let larger = max(a.values.reduce(0, +), b.values.reduce(0, +))
        return larger == 0 ? 1 : Double(common) / Double(larger)
    }

    static func expectSame(_ run: Outcome, _ base: Outcome, minimum: Double, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(run.batchesStored == base.batchesStored, "every batch stored exactly once", sourceLocation: sourceLocation)
        let tables: [(String, Double)] = [
            ("region events", agreement(run.events, base.events)), ("visits", agreement(run.visits, base.visits)),
            ("transitions", agreement(run.transitions, base.transitions)), ("journeys", agreement(run.journeys, base.journeys)),
            ("notifications", agreement(run.notifications, base.notifications)),
        ]
        let repeated = run.notifications.filter { $0.value > 1 }
        #expect(repeated.isEmpty, "notifications stored more than once: \(repeated)", sourceLocation: sourceLocation)
        for (name, share) in tables {
            #expect(share >= minimum, "\(name): \(String(format: "%.4f", share)) of the rows agree with the uninterrupted run",
                    sourceLocation: sourceLocation)
        }
    }
}

