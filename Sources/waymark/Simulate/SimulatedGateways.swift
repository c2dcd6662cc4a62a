import Foundation
import WaymarkCore
import WaymarkMQTT
import WaymarkSimulation

/// Every gateway of a simulated site, speaking MQTT as `waymark-edge` does
/// (`waymark simulate --publish`): the edge's batch wire format with per-boot sequence numbers at
/// QoS 1, a retained status per gateway (online at the start and after an outage, offline during
/// one and at the end, refreshed every `statusIntervalS` of simulated time), and an in-memory spool:
/// a batch is kept until the aggregator's cumulative ack covers it, and re-sent when no ack came
/// within `resendAfterS`.
///
/// With a sharded layout (`--shards N`, docs/scaling.md §1) each window's batch goes out as one
/// batch per shard on `…/sightings/<shard>`, each shard with its own sequence numbers, pending
/// list and acks (`…/ack/<shard>`), as `waymark-edge` with `publish.shards` does.
///
/// Batches are paced so simulated time runs `speedup` times faster than the wall clock from the
/// first batch on (0: as fast as the broker takes them).
final class SimulatedGateways: @unchecked Sendable {
    struct Options: Sendable {
        var connection: MQTTConnection
        var clientID: String
        var topicPrefix: String?
        var speedup: Double
        var resendAfterS = 30.0
        /// Resends per gateway per scan (once a second), oldest first, as the edge's in-flight
        /// window paces its spool: a backlog goes out paced, not all at once.
        var maxResendsPerScan = 20
        var statusIntervalS = 10.0
        /// Unacked batches kept per gateway and shard (like the edge's spool limit); the oldest go first.
        var maxUnackedPerGateway = 50_000
        /// The site's shard layout (unsharded by default).
        var shards = ShardLayout.single
    }

    struct Summary: Sendable {
        var published = 0, resent = 0, acked = 0, dropped = 0, unacked = 0
    }

    private struct Pending {
        var boot: String
        var seq: UInt64
        var payload: [UInt8]
        /// Window end (for sending backlogs of several gateways in time order).
        var end: Double
        var sentAt: Double?
        /// The aggregator asked for it again (a resend request in its ack).
        var requested = false
    }

    let scenario: Scenario
    let options: Options
    let topics: Topics
    private let client: MQTTClient
    private let lock = NSLock()
    /// Per stream, gateway-major: stream `g × shards + k` is gateway g's shard k.
    private var pending: [[Pending]]
    /// The next sequence number of each stream within its gateway's current boot (sharded only:
    /// unsharded batches keep the simulator's own numbers).
    private var nextSeq: [UInt64]
    private var totals = Summary()
    private var droppedPerGateway: [Int]
    private var online: [Bool]
    private var boots: [String?]
    private var nextStatusAt = -Double.infinity
    private var nextResendScan = 0.0
    private var wallStart = 0.0
    private let encoder = JSONEncoder()

    init(scenario: Scenario, options: Options) throws {
        self.scenario = scenario
        self.options = options
        topics = options.topicPrefix.map(Topics.init(prefix:)) ?? Topics(site: scenario.site.id)
        let n = scenario.site.gateways.count
        pending = Array(repeating: [], count: n * options.shards.count)
        nextSeq = Array(repeating: 1, count: n * options.shards.count)
        droppedPerGateway = Array(repeating: 0, count: n)
        online = Array(repeating: true, count: n)
        boots = Array(repeating: nil, count: n)
        client = try MQTTClient(.init(clientID: options.clientID, maxInflight: 100, maxQueued: 0))
        client.onMessage = { [weak self] message in self?.handle(message) }
        _ = try client.subscribe(topics.prefix + (options.shards.isSharded ? "/gateways/+/ack/+" : "/gateways/+/ack"), qos: 1)
        try client.connect(options.connection)
        try client.waitUntilConnected(timeout: 15)
    }

    /// Announces every gateway online and starts the clock.
    func begin() throws {
        wallStart = Date().timeIntervalSince1970
        lock.lock(); defer { lock.unlock() }
        try serviceLocked(simTime: scenario.parameters.start)
    }

    /// Publishes one batch when its time has come.
    func deliver(_ batch: SimulatedBatch) throws {
        let g = batch.gateway
        let trueEnd = batch.end - scenario.clockSkewS[g]
        try pace(until: trueEnd)
        let wire = batch.wireBatch(scenario: scenario)
        lock.lock(); defer { lock.unlock() }
        try followOutagesLocked(simTime: trueEnd)
        let shards = options.shards.count
        if boots[g] != batch.boot {  // a (re)started agent announces its boot
            boots[g] = batch.boot
            online[g] = true
            for k in 0..<shards { nextSeq[g * shards + k] = 1 }
            try publishStatusLocked(g, .online, simTime: trueEnd)
        }
        for (k, var part) in options.shards.split(wire).enumerated() {
            let stream = g * shards + k
            if options.shards.isSharded {
                part.seq = nextSeq[stream]
                nextSeq[stream] += 1
            }
            let payload = Array(try encoder.encode(part))
            pending[stream].append(Pending(boot: batch.boot, seq: part.seq, payload: payload, end: batch.end, sentAt: nil))
            if pending[stream].count > options.maxUnackedPerGateway {
                pending[stream].removeFirst()
                droppedPerGateway[g] += 1
                totals.dropped += 1
            }
            try sendLocked(stream, pending[stream].count - 1)
        }
        try serviceLocked(simTime: trueEnd)
    }

    /// Waits up to `ackWaitS` for the aggregator to ack everything (re-sending as the edge would),
    /// then announces every gateway offline and disconnects.
    func finish(ackWaitS: Double) throws -> Summary {
        let deadline = Date().timeIntervalSince1970 + ackWaitS
        while Date().timeIntervalSince1970 < deadline {
            lock.lock()
            let left = pending.reduce(0) { $0 + $1.count }
            if left > 0 { try serviceLocked(simTime: scenario.parameters.end) }
            lock.unlock()
            if left == 0 { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        lock.lock()
        for g in scenario.site.gateways.indices { try publishStatusLocked(g, .offline, simTime: scenario.parameters.end) }
        var summary = totals
        summary.unacked = pending.reduce(0) { $0 + $1.count }
        lock.unlock()
        let flushBy = Date().addingTimeInterval(10)
        while client.unacknowledgedCount > 0 && Date() < flushBy { Thread.sleep(forTimeInterval: 0.05) }
        client.disconnect()
        client.close()
        return summary
    }

    // MARK: - Internals

    private func pace(until simTime: Double) throws {
        guard options.speedup > 0 else { return }
        let due = wallStart + (simTime - scenario.parameters.start) / options.speedup
        while true {
            let now = Date().timeIntervalSince1970
            if now >= due { return }
            Thread.sleep(forTimeInterval: min(due - now, 0.2))
            lock.lock()
            defer { lock.unlock() }
            let simNow = scenario.parameters.start + (Date().timeIntervalSince1970 - wallStart) * options.speedup
            try followOutagesLocked(simTime: min(simNow, simTime))
            try serviceLocked(simTime: min(simNow, simTime))
        }
    }

    /// Status refreshes and resends that are due.
    private func serviceLocked(simTime: Double) throws {
        if simTime >= nextStatusAt {
            // Stamped with the refresh's scheduled time (start + k · interval), not the moment this
            // machine got round to it: the same seed gives the same statuses at the same evidence
            // times, so two runs feed an aggregator the same input.
            let interval = options.statusIntervalS, start = scenario.parameters.start
            let scheduled = start + ((simTime - start) / interval).rounded(.down) * interval
            for g in online.indices where online[g] { try publishStatusLocked(g, .online, simTime: scheduled) }
            nextStatusAt = scheduled + interval
        }
        let now = Date().timeIntervalSince1970
        guard now >= nextResendScan, client.isConnected else { return }
        nextResendScan = now + 1
        // What is due: never sent (published while disconnected), asked for again, or unacked for
        // too long (at most maxResendsPerScan per gateway). Sent in window order across gateways,
        // as gateways working side by side would deliver their backlogs, not one gateway's after
        // another's.
        var due: [(end: Double, g: Int, i: Int, resend: Bool)] = []
        for g in pending.indices {  // per stream
            var resends = 0
            for i in pending[g].indices {
                guard let sent = pending[g][i].sentAt else { due.append((pending[g][i].end, g, i, false)); continue }
                if resends < options.maxResendsPerScan && (pending[g][i].requested || now - sent >= options.resendAfterS) {
                    due.append((pending[g][i].end, g, i, true))
                    resends += 1
                }
            }
        }
        for d in due.sorted(by: { ($0.end, $0.g) < ($1.end, $1.g) }) {
            if d.resend {
                pending[d.g][d.i].requested = false
                totals.resent += 1
            }
            try sendLocked(d.g, d.i)
        }
    }

    /// A gateway in a simulated outage goes offline (its will, as the broker would publish it),
    /// and comes back online when the outage ends.
    private func followOutagesLocked(simTime: Double) throws {
        for g in scenario.outages.indices {
            let outage = scenario.outages[g].first { $0.contains(simTime) }
            let down = outage != nil
            if down == online[g] {
                online[g] = !down
                // Stamped with the outage's own boundary (deterministic), not when it was noticed.
                let ended = scenario.outages[g].filter { $0.upperBound <= simTime }.map(\.upperBound).max()
                try publishStatusLocked(g, down ? .offline : .online, simTime: outage?.lowerBound ?? ended ?? simTime)
            }
        }
    }

    /// Sends stream `g`'s pending batch `i`.
    private func sendLocked(_ g: Int, _ i: Int) throws {
        guard client.isConnected else { return }  // stays pending; sent after the reconnect
        let shards = options.shards
        let topic = topics.sightings(scenario.site.gateways[g / shards.count].id, shard: shards.isSharded ? g % shards.count : nil)
        _ = try client.publish(topic: topic, payload: pending[g][i].payload, qos: 1)
        if pending[g][i].sentAt == nil { totals.published += 1 }
        pending[g][i].sentAt = Date().timeIntervalSince1970
    }

    private func publishStatusLocked(_ g: Int, _ state: GatewayStatus.State, simTime: Double) throws {
        guard client.isConnected else { return }
        let id = scenario.site.gateways[g].id
        let status = GatewayStatus(state: state, gateway: id, version: "simulated", boot: boots[g],
                                   spoolDepth: pending[(g * options.shards.count)..<((g + 1) * options.shards.count)].reduce(0) { $0 + $1.count },
                                   spoolDropped: droppedPerGateway[g],
                                   scan: state == .online ? "replay" : "off", t: simTime)
        _ = try client.publish(topic: topics.status(id), payload: Array(try encoder.encode(status)), qos: 1, retain: true)
    }

    private func handle(_ message: MQTTMessage) {
        let shards = options.shards
        guard let (gateway, kind, shard) = topics.gatewayTopic(message.topic), kind == "ack",
              shards.isSharded == (shard != nil), (shard ?? 0) < shards.count,
              let ack = try? JSONDecoder().decode(GatewayAck.self, from: Data(message.payload)),
              let gw = scenario.site.gatewayIndex(gateway) else { return }
        let g = gw * shards.count + (shard ?? 0)  // the stream
        lock.lock(); defer { lock.unlock() }
        let before = pending[g].count
        pending[g].removeAll { $0.boot == ack.boot && $0.seq <= ack.seq }
        totals.acked += before - pending[g].count
        let range = ack.resendRange
        guard !range.isEmpty else { return }
        for i in pending[g].indices where pending[g][i].boot == ack.boot && range.contains(pending[g][i].seq)
            && pending[g][i].sentAt != nil {
            pending[g][i].requested = true
        }
        nextResendScan = 0  // at the next scan, not a second later
    }
}
