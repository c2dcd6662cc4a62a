import WaymarkCore
import WaymarkFusion

extension AggregatorCore {
    /// Feeds one accepted batch to the engine the way `waymark replay` feeds sightings: timers are
    /// advanced at each new second of evidence time, before the reading that reaches it.
    mutating func apply(_ batch: SightingBatch, gateway g: Int, offset: Double, receivedAt: Double) {
        let gatewayID = site.gateways[g].id
        let entrances = entranceRegionsByGateway[g]
        for entry in batch.sightings {
            tick(to: entry.last)
            let handle = engine.handle(for: entry.device)
            engine.ingest(entry, device: handle, gateway: g, into: &outputs)
            activity.note(handle, entry.device, first: entry.first, last: entry.last)
            for region in entrances {
                let key = WriteBatch.EntranceKey(region: region, device: entry.device, hour: Self.hour(entry.first))
                if let seen = pending.entranceHeard[key] {
                    pending.entranceHeard[key] = (min(seen.first, entry.first), max(seen.last, entry.last))
                } else {
                    pending.entranceHeard[key] = (entry.first, entry.last)
                }
            }
            if settings.rawSightings {
                pending.rawSightings.append(.init(gateway: gatewayID, boot: batch.boot, seq: batch.seq, entry: entry))
            }
        }
        if batch.sightings.isEmpty {
            engine.gatewayHeartbeat(g, at: batch.end)
            tick(to: batch.end)
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
    }

    mutating func tick(to t: Double) {
        latest = max(latest, t)
        if t >= nextTick {
            outputs += engine.advance(to: t)
            nextTick = t.rounded(.down) + 1
        }
    }

    /// Sorts the engine's outputs into rows to write and messages to publish.
    mutating func route() {
        guard !outputs.isEmpty else { return }
        for o in outputs {
            changedDevices.insert(o.device)
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
            case .visit(let v): pending.visits.append(v)
            case .journey(let j): pending.journeys.append(j)
            case .transition(let t): pending.transitions.append(t)
            case .monitored(let m): views.apply(m)
            }
        }
        outputs.removeAll(keepingCapacity: true)
    }
}
