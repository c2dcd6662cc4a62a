public import WaymarkCore

/// The one way evidence is fed to a `FusionEngine` over time, shared by the aggregator and
/// `waymark replay` so that offline results are what the live service produces: the engine's
/// timers advance at each new second of evidence time, before the reading that reaches it, and an
/// edge batch with no entries is its gateway's heartbeat at the end of the window (advancing the
/// timers to the window's start only, see `feed`).
public struct EngineFeed: Sendable {
    /// The next whole second of evidence time at which the timers advance (−∞ before the first
    /// reading). The aggregator checkpoints it with the devices.
    public var nextTick: Double

    public init(nextTick: Double = -.infinity) { self.nextTick = nextTick }

    /// Advances the engine's timers when `t` has reached the next whole second.
    public mutating func advance(_ engine: inout FusionEngine, to t: Double, into out: inout [FusionOutput]) {
        guard t >= nextTick else { return }
        out += engine.advance(to: t)
        nextTick = t.rounded(.down) + 1
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
        }
    }
}
