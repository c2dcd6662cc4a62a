public import WaymarkCore

/// The one way evidence is fed to a `FusionEngine` over time, shared by the aggregator and
/// `waymark replay` so that offline results are what the live service produces. The engine's
/// timers advance only to whole seconds of evidence time: to the end of the last second with
/// evidence, then to the start of the new one, before the first reading of a new second (`advance`);
/// and an edge batch with no entries is its gateway's heartbeat at the end of the window (advancing
/// the timers to the window's start only, see `feed`). The aggregator advances them to the same
/// points sooner, as soon as its reorder stage's watermark says a second's evidence is all in
/// (`close`): a device's second closes then, not when the next second's first reading comes.
public struct EngineFeed: Sendable {
    /// The next whole second of evidence time at which the timers advance (−∞ before the first
    /// reading). The aggregator checkpoints it with the devices.
    public var nextTick: Double
    /// The end of the latest whole second the evidence fed so far reaches (a reading's second, an
    /// empty batch's window; −∞ before any). Where seconds without any evidence follow it, the
    /// timers stop there first, as the aggregator's watermark stops there once that second is in.
    public var evidenceEnd: Double

    public init(nextTick: Double = -.infinity, evidenceEnd: Double = -.infinity) {
        self.nextTick = nextTick
        self.evidenceEnd = evidenceEnd
    }

    /// Evidence at `t` follows: when `t` has reached the next whole second, the timers advance to
    /// the end of the last second with evidence (when seconds without any lie between), then to the
    /// whole second `t` is in — every device's earlier second of evidence closes and the timers due
    /// by then fire. Whole seconds only: a reading's own fraction would make the points depend on
    /// when the first reading of a second arrived, which the aggregator's watermark cannot know.
    public mutating func advance(_ engine: inout FusionEngine, to t: Double, into out: inout [FusionOutput]) {
        let second = t.rounded(.down)
        if t >= nextTick {
            if evidenceEnd.isFinite && evidenceEnd >= nextTick && evidenceEnd < second { out += engine.advance(to: evidenceEnd) }
            out += engine.advance(to: second)
            nextTick = second + 1
        }
        evidenceEnd = max(evidenceEnd, second + 1)
    }

    /// Every gateway's evidence up to `t` has been fed (the aggregator's watermark): the timers
    /// advance to the whole second `t` is in, as `advance` will for the next reading, only sooner.
    public mutating func close(_ engine: inout FusionEngine, through t: Double, into out: inout [FusionOutput]) {
        let second = t.rounded(.down)
        guard second >= nextTick else { return }
        out += engine.advance(to: second)
        nextTick = second + 1
    }

    /// Feeds one edge batch from gateway index `gateway`, entry by entry in its order; `handles`
    /// receives each entry's device handle (same order), for per-device bookkeeping by the caller.
    public mutating func feed(_ batch: SightingBatch, gateway: Int, _ engine: inout FusionEngine,
                              into out: inout [FusionOutput], handles: inout [DeviceHandle]) {
        handles.removeAll(keepingCapacity: true)
        // Field by field, through the buffer: a copy of each entry (`for entry in …`, passing one,
        // or even reading its device as `entries[i].device`) cost an outlined copy of the whole
        // entry, a retain and a release per sighting.
        batch.sightings.withUnsafeBufferPointer { entries in
            guard let first = entries.baseAddress else { return }
            for i in entries.indices {
                let entry = first + i
                let last = entry.pointee.last
                advance(&engine, to: last, into: &out)
                let handle = engine.handle(for: entry.pointer(to: \.device)!.pointee)
                engine.ingest(Observation(device: handle, gateway: gateway, windowLast: last, rssiMean: entry.pointee.rssiMean,
                                          tx: entry.pointee.tx, count: entry.pointee.count), into: &out)
                handles.append(handle)
            }
        }
        if batch.sightings.isEmpty {
            // The gateway was alive to the window's end, but the timers advance only to its start:
            // other gateways' batches of the same window, with readings in it, may still follow (the
            // reorder stage releases equal window ends in the site file's gateway order, and a
            // sharded edge sends an empty batch for every shard without devices). Advancing to the
            // end would close every device's second of evidence before the rest of its readings
            // arrived, and those would open the same second again: one second fused as two steps.
            engine.gatewayHeartbeat(gateway, at: batch.end)
            advance(&engine, to: batch.start, into: &out)
            evidenceEnd = max(evidenceEnd, batch.end.rounded(.down))
        }
    }
}
