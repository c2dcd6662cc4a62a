import WaymarkCore

/// An accepted batch waiting in the reorder stage; a gateway status waiting for its time
/// (`statusOnline`); or (batch nil) a rejected batch whose sequence number is marked processed only
/// after the held batches of its gateway before it.
public struct HeldBatch: Sendable {
    var key: ProgressTracker.Key
    var seq: UInt64
    var batch: SightingBatch?
    var gateway: Int
    var offset: Double
    var receivedAt: Double
    /// The payload as received, when raw sightings are stored (for the quarantine table).
    var payload: [UInt8] = []
    /// A gateway status (online or not) to apply at its own time (`receivedAt` holds the status's
    /// corrected time), in evidence order with the batches; nil for a batch or a marker.
    var statusOnline: Bool? = nil
}

extension AggregatorCore {
    /// Batches held for event-time ordering.
    public var heldBatches: Int { reorder.count }
    /// Batches that arrived behind the watermark and were fused late.
    public var lateBatches: Int { reorder.late }

    /// Releases the held batches that are due at `now` (the aggregator's clock) to the engine.
    public mutating func releaseDue(at now: Double) {
        expireGaps(at: now)
        fuse(reorder.release(at: now))
    }

    /// Catch-ups that ended by timeout rather than by the gateway's batch arriving.
    public var catchUpTimeouts: Int { reorder.catchUpTimeouts }

    /// After a restart: the reorder stage resumes where the checkpoint left it — every gateway at
    /// the window end of its last fused batch, online unless its latest status says otherwise — so
    /// the batches the broker queued meanwhile are fused in the order an uninterrupted run fuses
    /// them (`ReorderBuffer`: event-time activity; gaps are parked and asked for again).
    ///
    /// With the receive clock `now`, every online gateway is also held as catching up until its
    /// next batch arrives (or `catch_up_s` passes): what it sent while the aggregator was down
    /// reaches us in no particular order across gateways (queued by the broker, or resent when
    /// their acks do not come), and without the hold a gateway whose backlog comes last would have
    /// its evidence fused after the others' newer evidence, unlike in an uninterrupted run.
    mutating func restoreReorder(now: Double? = nil) {
        for (gateway, end) in fusedEnds.sorted(by: { $0.key < $1.key }) {
            let online = lastStatus[gateway]?.state != .offline
            reorder.restore(source: gateway, latestEnd: end, online: online)
            if online, let now, settings.catchUpS > 0 {
                reorder.holdForCatchUp(gateway, until: now + settings.catchUpS)
            }
        }
    }

    /// Releases every held batch (shutdown: what was taken in is committed and acked).
    public mutating func releaseAll() {
        fuse(reorder.releaseAll(), closing: false)
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
        fuse(reorder.insert(marker, source: key.gateway, rank: site.gatewayIndex(key.gateway) ?? 0, windowEnd: nil, at: now))
    }

    /// Fuses released items in order, then (`closing`: they came from a `release` of the reorder
    /// stage, whose watermark is current) closes what the watermark completed (`closeToWatermark`).
    mutating func fuse(_ released: [HeldBatch], closing: Bool = true) {
        for h in released {
            if let online = h.statusOnline {
                applyStatus(gateway: h.gateway, online: online, reportedAt: h.receivedAt)
                continue
            }
            if let batch = h.batch {
                apply(batch, gateway: h.gateway, shard: h.key.shard, offset: h.offset, receivedAt: h.receivedAt, payload: h.payload)
                fusedEnds[h.key.gateway] = max(fusedEnds[h.key.gateway] ?? -.infinity, batch.end)
            }
            progress.markProcessed(h.key, seq: h.seq)
        }
        if closing { closeToWatermark() }
    }

    /// Advances the engine's timers to the reorder stage's watermark: every active gateway has sent
    /// its windows up to it and they have all been fused, so each device's second of evidence that
    /// ends there is complete and closes now — its live region is published with this second's
    /// evidence, not a window later when the next second's first reading arrives (docs/aggregator.md,
    /// "Live latency"). The timers advance to the same whole seconds as `waymark replay`'s
    /// (`EngineFeed`), only sooner in wall time. With the stage off there is no watermark
    /// (nothing says the other gateways' readings of a second have all come), so the timers
    /// advance with the readings as before.
    mutating func closeToWatermark() {
        guard reorder.maxLatenessS > 0 else { return }
        let w = reorder.releasedWatermark
        guard w.isFinite, w >= fusion.nextTick else { return }
        fusion.close(through: w, into: &outputs)
        route()
        advanceNotifier()
    }
}
