import Foundation
import Testing
import WaymarkCore
import WaymarkEdge

/// Outages: the broker goes away, the agent restarts, the spool fills up. Each test runs its own
/// Mosquitto (so it can be stopped) next to the one scripts/test.sh started.
@Suite("Edge: agent resilience", .enabled(if: EdgeTestEnvironment.hasBroker), .serialized)
struct EdgeResilienceIntegrationTests {
    @Test("the broker stops mid-stream and comes back: every (boot, seq) arrives, none missing")
    func brokerOutage() async throws {
        _ = try #require(EdgeTestEnvironment.brokerURL)
        let broker = try PrivateBroker()
        try broker.start()
        defer { broker.stop() }
        let prefix = EdgeTestEnvironment.uniquePrefix("edge-outage")
        let spool = EdgeHarness.temporaryDirectory("edge-spool")
        defer { try? FileManager.default.removeItem(atPath: spool) }
        let collector = try BatchCollector(broker: broker.url, prefix: prefix, acking: true)
        defer { collector.close() }
        try collector.client.waitUntilConnected(timeout: 20)
        try await Task.sleep(for: .milliseconds(200))

        // The capture at twice its (10 ms per event) pace: about 2.6 s of adverts, 1 s windows.
        var config = EdgeHarness.config(broker: broker.url, prefix: prefix, spool: spool)
        config.windowS = 0.25
        let run = try RunningAgent(config, source: ReplaySource(path: EdgeHarness.capture2x, rate: 2, startTime: 36_000))
        #expect(await eventually(timeout: 60) { run.agent.snapshot().nextSeq > 2 })
        // Batches are cut whether or not the agent is connected, so wait for the first connection
        // (and a delivered batch) too: on a loaded machine the CONNACK can come after the outage
        // began, and then the connection after it is the first one, not a reconnection.
        #expect(await eventually(timeout: 60) {
            let s = run.agent.snapshot()
            return s.connected && s.runtime.published >= 1
        })
        #expect(run.agent.snapshot().runtime.reconnects == 0)
        broker.stop()
        #expect(await eventually(timeout: 60) { !run.agent.snapshot().connected })
        try await Task.sleep(for: .seconds(1.5))
        try broker.start()
        // On a loaded machine the replay can finish, and everything be acked, before the outage;
        // the agent must still come back to the broker, so wait for that too.
        #expect(await eventually(timeout: 60) {
            let s = run.agent.snapshot()
            return s.sourceFinished && s.spoolDepth == 0 && s.connected && s.runtime.reconnects >= 1
        })
        try await run.stop()
        let s = run.agent.snapshot()
        let produced = Int(s.nextSeq - 1)
        #expect(produced > 5)
        let want = Set((1...produced).map { "\(run.agent.boot)/\($0)" })
        #expect(want.subtracting(collector.keys).isEmpty, "missing: \(want.subtracting(collector.keys).sorted())")
        #expect(collector.keys == want)
        #expect(s.runtime.reconnects >= 1)
        #expect(s.spoolDropped == 0)
    }

    @Test("the agent restarts mid-stream: what the first run did not get acked is re-sent by the second")
    func agentRestart() async throws {
        let url = try #require(EdgeTestEnvironment.brokerURL)
        let prefix = EdgeTestEnvironment.uniquePrefix("edge-restart")
        let spool = EdgeHarness.temporaryDirectory("edge-spool")
        defer { try? FileManager.default.removeItem(atPath: spool) }
        let collector = try BatchCollector(broker: url, prefix: prefix, acking: false)
        defer { collector.close() }
        try collector.client.waitUntilConnected(timeout: 20)
        try await Task.sleep(for: .milliseconds(200))

        var config = EdgeHarness.config(broker: url, prefix: prefix, spool: spool)
        config.windowS = 0.25
        config.spoolResendAfterS = 60   // no resends within a run: only the restart re-sends
        let first = try RunningAgent(config, source: ReplaySource(path: EdgeHarness.capture2x, rate: 2, startTime: 36_000))
        #expect(await eventually(timeout: 60) { first.agent.snapshot().nextSeq > 4 })
        try await first.stop()   // SIGTERM-like: the open window is flushed to the spool
        let firstBoot = first.agent.boot
        let firstCount = Int(first.agent.snapshot().nextSeq - 1)
        #expect(first.agent.snapshot().spoolDepth == firstCount)
        #expect(await eventually(timeout: 60) { collector.batches.filter { $0.boot == firstBoot }.count == firstCount })
        // The aggregator committed the first two before the restart.
        try collector.ack(boot: firstBoot, seq: 2)
        try await Task.sleep(for: .milliseconds(300))   // the agent is down: the ack is not seen

        collector.acking = true
        let second = try RunningAgent(config, source: ReplaySource(path: EdgeHarness.capture2x, rate: 0, startTime: 40_000))
        #expect(second.agent.snapshot().spoolRecovered == firstCount)
        #expect(await eventually(timeout: 60) {
            let s = second.agent.snapshot()
            return s.sourceFinished && s.spoolDepth == 0
        })
        try await second.stop()
        let resent = collector.batches.filter { $0.boot == firstBoot }
        let perSeq = Dictionary(grouping: resent, by: \.seq).mapValues(\.count)
        #expect(perSeq.count == firstCount)
        #expect(perSeq.values.allSatisfy { $0 == 2 }, "each of the first run's batches sent once per run: \(perSeq)")
        #expect(second.agent.snapshot().runtime.resent == firstCount)
        let secondSeqs = Set(collector.batches.filter { $0.boot == second.agent.boot }.map(\.seq))
        #expect(secondSeqs == Set(1...(second.agent.snapshot().nextSeq - 1)))
        #expect(second.agent.boot != firstBoot)
    }

    @Test("a full spool drops the oldest batches and reports exactly how many, in metrics and status")
    func fullSpool() async throws {
        _ = try #require(EdgeTestEnvironment.brokerURL)
        let broker = try PrivateBroker()   // not started: the broker is unreachable at first
        defer { broker.stop() }
        let prefix = EdgeTestEnvironment.uniquePrefix("edge-full")
        let spool = EdgeHarness.temporaryDirectory("edge-spool")
        defer { try? FileManager.default.removeItem(atPath: spool) }

        var config = EdgeHarness.config(broker: broker.url, prefix: prefix, spool: spool)
        config.windowS = 0.1
        config.spoolSegmentBatches = 1
        config.spoolMaxBytes = 4096
        let run = try RunningAgent(config, source: ReplaySource(path: EdgeHarness.capture2x, rate: 0, startTime: 36_000))
        #expect(await eventually(timeout: 60) { run.agent.snapshot().sourceFinished })
        let s = run.agent.snapshot()
        let produced = Int(s.nextSeq - 1)
        #expect(s.spoolDropped > 0)
        #expect(s.spoolDropped + s.spoolDepth == produced)
        let files = try FileManager.default.contentsOfDirectory(atPath: spool).filter { $0.hasSuffix(".wms") }
        #expect(files.count == s.spoolDepth)
        #expect(s.spoolBytes <= 4096 + 2048)

        // The broker comes up: the kept (newest) batches arrive, and the status carries the drop count.
        // The collector acks each batch it receives, and an ack covers every lower seq too. The
        // agent may publish its spool before the collector's subscription is in place, so the
        // collector acks only once it is surely subscribed; batches it missed are re-sent
        // (spoolResendAfterS) in order and then received before any ack can cover them.
        let collector = try BatchCollector(broker: broker.url, prefix: prefix, acking: false)
        defer { collector.close() }
        try broker.start()
        try collector.client.waitUntilConnected(timeout: 10)
        try await Task.sleep(for: .seconds(1))
        collector.acking = true
        #expect(await eventually(timeout: 60) { run.agent.snapshot().spoolDepth == 0 })
        #expect(await eventually(timeout: 60) { collector.statuses.contains { $0.spoolDropped == s.spoolDropped } })
        try await run.stop()
        let kept = Set(collector.batches.map(\.seq))
        #expect(kept == Set(UInt64(s.spoolDropped + 1)...UInt64(produced)), "the oldest \(s.spoolDropped) were dropped")
    }
}
