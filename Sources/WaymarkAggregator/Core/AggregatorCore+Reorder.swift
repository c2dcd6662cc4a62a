import WaymarkCore

/// An accepted batch waiting in the reorder stage, or (batch nil) a rejected batch whose sequence
/// number is marked processed only after the held batches of its gateway before it.
public struct HeldBatch: Sendable {
    var key: ProgressTracker.Key
    var seq: UInt64
    var batch: SightingBatch?
    var gateway: Int
    var offset: Double
    var receivedAt: Double
    /// The payload as received, when raw sightings are stored (for the quarantine table).
    var payload: [UInt8] = []
}

extension AggregatorCore {
    /// Batches held for event-time ordering.
    public var heldBatches: Int { reorder.count }
    /// Batches that arrived behind the watermark and were fused late.
    public var lateBatches: Int { reorder.late }

    /// Releases the held batches that are due at `now` (the aggregator's clock) to the engine.
    public mutating func releaseDue(at now: Double) {
        fuse(reorder.release(at: now))
    }

    /// Releases every held batch (shutdown: what was taken in is committed and acked).
    public mutating func releaseAll() {
        fuse(reorder.releaseAll())
    }

    /// A batch that is not fused but whose sequence number must be covered by the gateway's
    /// mark: marked now, or after the gateway's held batches when it has some.
    mutating func settle(_ key: ProgressTracker.Key, seq: UInt64, at now: Double) {
        progress.markReceived(key, seq: seq)
        guard reorder.isHolding(key.gateway) else {
            progress.markProcessed(key, seq: seq)
            return
        }
        let marker = HeldBatch(key: key, seq: seq, batch: nil, gateway: -1, offset: 0, receivedAt: now)
        fuse(reorder.insert(marker, source: key.gateway, windowEnd: nil, at: now))
    }

    mutating func fuse(_ released: [HeldBatch]) {
        for h in released {
            if let batch = h.batch { apply(batch, gateway: h.gateway, offset: h.offset, receivedAt: h.receivedAt, payload: h.payload) }
            progress.markProcessed(h.key, seq: h.seq)
        }
    }
}
