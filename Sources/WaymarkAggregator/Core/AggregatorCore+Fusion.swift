import WaymarkCore
import WaymarkFusion
import WaymarkNotify

extension AggregatorCore {
    /// Feeds one accepted batch to the fusion workers (each through its `EngineFeed`, as
    /// `waymark replay --batches --workers N` does), then notes what the write needs per entry: devices heard, entrances, raw sightings.
    mutating func apply(_ batch: SightingBatch, gateway g: Int, shard: Int = 0, offset: Double, receivedAt: Double, payload: [UInt8] = []) {
        let gatewayID = site.gateways[g].id
        let entrances = entranceRegionsByGateway[g]
        fusion.feed(batch, gateway: g, into: &outputs, handles: &handles)
        if batch.sightings.isEmpty { latest = max(latest, batch.end) }
        // Field by field, through the buffer: iterating the entries (or reading a device as
        // `entries[i].device`) copied each whole entry, with a retain and a release.
        batch.sightings.withUnsafeBufferPointer { entries in
            for i in 0..<min(entries.count, handles.count) {
                let entry = entries.baseAddress! + i
                let first = entry.pointee.first, last = entry.pointee.last
                latest = max(latest, last)
                activity.note(handles[i], entry.pointer(to: \.device)!.pointee, first: first, last: last)
                for region in entrances {
                    let key = WriteBatch.EntranceKey(region: region, device: entry.pointee.device, hour: Self.hour(first))
                    if let seen = pending.entranceHeard[key] {
                        pending.entranceHeard[key] = (min(seen.first, first), max(seen.last, last))
                    } else {
                        pending.entranceHeard[key] = (first, last)
                    }
                }
                if settings.rawSightings {
                    pending.rawSightings.append(.init(gateway: gatewayID, boot: batch.boot, shard: shard, seq: batch.seq, entry: entries[i]))
                }
            }
        }
        if settings.rawSightings && !batch.sightings.isEmpty {
            pending.rawSources.append(.init(gateway: gatewayID, boot: batch.boot, shard: shard, seq: batch.seq, receivedAt: receivedAt,
                                            payload: payload))
        }
        var ingest = pending.ingest[.init(gateway: gatewayID, hour: Self.hour(receivedAt))] ?? .init()
        ingest.batches += 1
        ingest.sightings += batch.sightings.count
        if offset != 0 { ingest.clockCorrected += 1 }
        ingest.lastBatchAt = max(ingest.lastBatchAt, receivedAt)
        ingest.maxOffsetS = max(ingest.maxOffsetS, abs(offset))
        pending.ingest[.init(gateway: gatewayID, hour: Self.hour(receivedAt))] = ingest
        pending.sightingCount += batch.sightings.count
        route()
        advanceNotifier()
    }

    /// Dwell timers and delayed goodbyes follow the engine's clock, at the same points as in
    /// `waymark replay` (after each engine call).
    mutating func advanceNotifier() {
        if notifier.isActive, case let next = fusion.nextTick, next.isFinite {
            notifier.advance(to: next - 1, into: &pending.notifications)
        }
    }

    /// Sorts the engine's outputs into rows to write and messages to publish, and lets the
    /// notification rules see each (their notifications are written, then delivered after the commit).
    mutating func route() {
        guard !outputs.isEmpty else { return }
        let notify = notifier.isActive
        // A device's outputs come in runs (a closed second gives its live region, states, a move…):
        // its id is hashed into the set once per run, not once per output.
        var previous: DeviceID? = nil
        for o in outputs {
            if o.device != previous {
                changedDevices.insert(o.device)
                previous = o.device
            }
            if notify { notifier.observe(o, into: &pending.notifications) }
            switch o {
            case .state(let s):
                let kind = switch s.state { case .inside: "enter"; case .outside: "exit"; case .unknown: "unknown" }
                pending.events.append(.init(device: s.device, t: s.t, kind: kind, region: s.region,
                                            proximity: s.proximity.rawValue, distanceM: s.distanceM))
                views.apply(s)
                publications.append(Publication(topic: topics.events, payload: DevicePayloads.event(s, kind: kind), retain: false))
            case .location(let l):
                let from = views.current(of: l.device)
                pending.events.append(.init(device: l.device, t: l.t, kind: "region_change", region: l.region,
                                            proximity: nil, distanceM: nil))
                views.apply(l)
                publications.append(Publication(topic: topics.events, payload: DevicePayloads.regionChange(l, from: from), retain: false))
            case .live(let l): views.apply(l)
            case .visit(let v): pending.visits.append(v)
            case .journey(let j): pending.journeys.append(j)
            case .transition(let t): pending.transitions.append(t)
            case .monitored(let m): views.apply(m)
            case .forgotten(let f):
                // Its checkpoint is deleted with this write and its retained messages cleared
                // (an empty retained message removes it from the broker; subscribers read that
                // as "the device is gone"). Publications keep their order: should it be heard
                // again before they go out, its new state follows the clearing.
                pending.forgottenDevices.append(f.device)
                views.forget(f.device)
                publications.append(Publication(topic: topics.deviceState(f.device), payload: [], retain: true))
                publications.append(Publication(topic: topics.deviceMonitored(f.device), payload: [], retain: true))
            }
        }
        outputs.removeAll(keepingCapacity: true)
    }
}
