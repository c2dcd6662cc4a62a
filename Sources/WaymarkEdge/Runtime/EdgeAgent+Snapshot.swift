/// A consistent copy of the agent's counters and spool state, for tests, the CLI and metrics.
public struct EdgeSnapshot: Sendable, Equatable {
    public var pipeline: EdgeCounters
    public var runtime: EdgeRuntimeCounters
    public var spoolDepth: Int
    public var spoolBytes: Int
    public var spoolDropped: Int
    public var spoolDamaged: Int
    public var spoolRecovered: Int
    public var connected: Bool
    public var scan: SourceState
    public var sourceFinished: Bool
    /// The next batch's sequence number.
    public var nextSeq: UInt64
}

extension EdgeAgent {
    public func snapshot() -> EdgeSnapshot {
        lock.withLock { snapshotLocked() }
    }

    func snapshotLocked() -> EdgeSnapshot {
        EdgeSnapshot(pipeline: pipeline.counters, runtime: runtime, spoolDepth: lanes.depth, spoolBytes: lanes.totalBytes,
                     spoolDropped: lanes.dropped, spoolDamaged: lanes.damagedRegions, spoolRecovered: lanes.recovered,
                     connected: client.isConnected, scan: scanState, sourceFinished: sourceFinished,
                     nextSeq: pipeline.windower.nextSeq)
    }

    func updateMetrics() {
        guard let metrics else { return }
        let s = snapshot()
        metrics.update(.init(pipeline: s.pipeline, runtime: s.runtime, spoolDepth: s.spoolDepth, spoolBytes: s.spoolBytes,
                             spoolDropped: s.spoolDropped, spoolDamaged: s.spoolDamaged, connected: s.connected,
                             scanning: s.scan == .on || s.scan == .replay))
    }
}
