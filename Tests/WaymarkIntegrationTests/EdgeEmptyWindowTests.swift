import Foundation
import Testing
import WaymarkCore
import WaymarkEdge

/// A radio that hears nothing: the agent's clock closes its windows (a live source).
final class QuietRadio: SightingSource, @unchecked Sendable {
    let name = "quiet"
    let usesWallClock = true
    private let lock = NSLock()
    private var stopped = false

    func run(into sink: any SightingSink) throws {
        sink.sourceStateChanged(.on)
        while !lock.withLock({ stopped }) { Thread.sleep(forTimeInterval: 0.05) }
    }

    func stop() { lock.withLock { stopped = true } }
}

/// Empty windows on a live radio: sent while the aggregator acks, left out while it does not
/// (they would only fill the spool with evidence nobody waits for), back with the acks.
@Suite("Edge empty windows", .enabled(if: EdgeTestEnvironment.brokerURL != nil))
struct EdgeEmptyWindowTests {
    @Test("a quiet gateway sends every window while acked, and stops spooling empty ones while not")
    func emptyWindowsFollowTheAcks() async throws {
        let url = try #require(EdgeTestEnvironment.brokerURL)
        let prefix = EdgeTestEnvironment.uniquePrefix("edge-empty")
        let spool = EdgeHarness.temporaryDirectory("edge-empty-spool")
        defer { try? FileManager.default.removeItem(atPath: spool) }
        let collector = try BatchCollector(broker: url, prefix: prefix, acking: true)
        defer { collector.close() }
        try collector.client.waitUntilConnected(timeout: 20)
        try await Task.sleep(for: .milliseconds(200))
        var config = EdgeHarness.config(broker: url, prefix: prefix, spool: spool)
        config.spoolResendAfterS = 30
        let run = try RunningAgent(config, source: QuietRadio())

        // Acked: one empty batch a window, each acked and gone from the spool.
        #expect(await eventually(timeout: 30) { collector.batches.count >= 3 })
        #expect(collector.batches.allSatisfy { $0.sightings.isEmpty && $0.end - $0.start == 1 })
        #expect(await eventually(timeout: 30) { run.agent.snapshot().spoolDepth <= 1 })

        // The aggregator stops acking: empty windows go on until the backlog, then stop.
        collector.acking = false
        let backlog = EdgeAgent.emptyWindowBacklog
        #expect(await eventually(timeout: 60) { run.agent.snapshot().spoolDepth == backlog + 1 })
        let held = run.agent.snapshot().nextSeq
        try await Task.sleep(for: .seconds(4))
        #expect(run.agent.snapshot().nextSeq == held, "no empty window numbered while nothing is acked")
        #expect(run.agent.snapshot().spoolDepth == backlog + 1)

        // Acks again: the backlog goes and the empty windows come back.
        collector.acking = true
        try collector.ack(boot: run.agent.boot, seq: held - 1)
        #expect(await eventually(timeout: 30) { run.agent.snapshot().nextSeq >= held + 3 })
        #expect(await eventually(timeout: 30) { run.agent.snapshot().spoolDepth <= 1 })
        // Sequence numbers stay contiguous: the windows left out were never numbered.
        let seqs = Set(collector.batches.filter { $0.boot == run.agent.boot }.map(\.seq))
        #expect(seqs == Set(1...(seqs.max() ?? 0)), "every number up to the latest was sent")
        try await run.stop()
    }
}
