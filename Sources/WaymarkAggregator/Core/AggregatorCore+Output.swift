import WaymarkCore
import WaymarkFusion
import WaymarkNotify

extension AggregatorCore {
    /// Rows, checkpoints and high-water marks accumulated since the last call, as one write.
    /// Returns nil when there is nothing to write.
    public mutating func sealWrite() -> WriteBatch? {
        route()
        var batch = pending
        batch.progress = progress.takeAdvanced()
        for heard in activity.take() {
            // A device can appear twice when the engine forgot it and it was heard again.
            let seen = batch.devices[heard.device]
            batch.devices[heard.device] = (min(heard.first, seen?.first ?? .infinity), max(heard.last, seen?.last ?? -.infinity))
            changedDevices.insert(heard.device)
        }
        for device in fusion.takeTimerTouched() { changedDevices.insert(device) }
        for device in changedDevices {
            if let cp = fusion.checkpoint(device: device) { batch.checkpoints.append(cp) }
        }
        changedDevices.removeAll(keepingCapacity: true)
        if notifier.isActive { batch.notifierStates = notifier.takeChanged() }
        if !settings.shards.recordsGatewayStatus { batch.statuses.removeAll() }
        guard !batch.isEmpty else { return nil }
        writeNumber += 1
        batch.aggregatorState = checkpointState()
        pending = WriteBatch()
        return batch
    }

    /// The site-wide part of the checkpoint.
    func checkpointState() -> AggregatorCheckpoint {
        var s = AggregatorCheckpoint()
        let workers = fusion.workerCheckpoints()
        // Worker 0's in the fields of a single engine too: a checkpoint as an older aggregator
        // (one engine) wrote and reads it.
        s.nextTick = workers[0].nextTick
        s.evidenceEnd = workers[0].evidenceEnd
        s.latest = latest
        for (gw, clock) in clocks where clock.offset != 0 { s.clockOffsets[gw] = clock.offset }
        s.calibration = workers[0].calibration
        s.gatewayHealth = workers[0].gatewayHealth
        s.fusionWorkers = workers.count > 1 ? workers : nil
        s.gatewayEnds = fusedEnds
        s.writeNumber = writeNumber
        return s
    }

    /// Events, and the state and monitored set of every device that changed since the last call.
    /// `publishedLiveChanges` then holds the evidence times of the live-region changes among them.
    public mutating func takePublications() -> [Publication] {
        route()
        var out = publications
        publications.removeAll(keepingCapacity: true)
        publishedLiveChanges.removeAll(keepingCapacity: true)
        for device in views.dirtyMonitored.sorted() {
            guard let v = views.views[device] else { continue }
            out.append(Publication(topic: topics.deviceMonitored(device), payload: DevicePayloads.monitored(device, v, site: site), retain: true))
        }
        for device in views.dirtyState.sorted() { publishState(of: device, into: &out) }
        views.dirtyMonitored.removeAll(keepingCapacity: true)
        views.dirtyState.removeAll(keepingCapacity: true)
        views.liveChanged.removeAll(keepingCapacity: true)
        return out
    }

    /// Whether a device's live region changed since its state was last published.
    public var hasLiveChanges: Bool { !views.liveChanged.isEmpty }

    /// The events so far and the state of every device whose live region changed, at once instead
    /// of at the next publication interval: the live region is what someone waiting for a device
    /// sees change (docs/aggregator.md, "Live latency"). The other changed devices wait for
    /// `takePublications`, so a busy venue still sends each device's state about once per interval.
    /// `publishedLiveChanges` then holds the evidence times of the live-region changes published.
    public mutating func takeLiveChanges() -> [Publication] {
        route()
        var out = publications
        publications.removeAll(keepingCapacity: true)
        publishedLiveChanges.removeAll(keepingCapacity: true)
        for device in views.liveChanged.sorted() where views.views[device].map({ $0.publishedLive != .some($0.live) }) ?? false {
            publishState(of: device, into: &out)
            views.dirtyState.remove(device)
        }
        views.liveChanged.removeAll(keepingCapacity: true)
        return out
    }

    /// Appends `device`'s retained state and notes a live change it shows for the first time.
    private mutating func publishState(of device: DeviceID, into out: inout [Publication]) {
        guard let v = views.views[device] else { return }
        out.append(Publication(topic: topics.deviceState(device), payload: DevicePayloads.state(device, v), retain: true))
        // A live change that was undone before this state went out is no change to a reader.
        if let t = v.liveChangedAt, v.publishedLive != .some(v.live) { publishedLiveChanges.append(t) }
        views.views[device]?.liveChangedAt = nil
        views.views[device]?.publishedLive = .some(v.live)
    }

    /// Marks a write as committed (its marks become the ones duplicates are re-acked with) and
    /// returns the acks to publish.
    public mutating func committed(_ batch: WriteBatch) -> [Publication] {
        progress.markCommitted(batch.progress)
        return batch.progress.map { key, seq in
            ackPublication(gateway: key.gateway, shard: key.shard, GatewayAck(boot: key.boot, seq: seq))
        }.sorted { $0.topic < $1.topic }
    }

    /// Restores what a previous run committed: device checkpoints, high-water marks and the
    /// site-wide state. Call before the first message. With shards, only the owned shards'
    /// devices and marks are taken (the database holds every aggregator's). Without a state of its
    /// own, the workers start from `calibrationSeed` (another aggregator's calibrations of the
    /// same venue, `AggregatorStore.Restored.calibrationSeed`) when given: moving a shard, or
    /// splitting a site in shards, does not send the new owner back to the site file's values.
    public mutating func restore(devices: [DeviceCheckpoint], progress marks: [ProgressTracker.Key: UInt64],
                                 state: AggregatorCheckpoint?, statuses: [String: StatusSummary] = [:], now: Double? = nil,
                                 notifierStates: [NotifierCheckpoint] = [], calibrationSeed: [FusionWorkerCheckpoint] = []) {
        let shards = settings.shards
        for cp in devices where shards.owns(device: cp.device) { fusion.restore(cp) }
        notifier.restore(shards.ownsAll ? notifierStates : notifierStates.filter { shards.owns(device: $0.device) })
        lastStatus = statuses
        progress.restore(shards.ownsAll ? marks : marks.filter { shards.owns(shard: $0.key.shard) })
        if let state {
            latest = state.latest
            writeNumber = state.writeNumber
            fusion.restore(workers: state.fusionWorkers ?? [
                FusionWorkerCheckpoint(nextTick: state.nextTick, evidenceEnd: state.evidenceEnd, calibration: state.calibration,
                                       gatewayHealth: state.gatewayHealth),
            ])
            fusedEnds = state.gatewayEnds ?? [:]
            for (gw, offset) in state.clockOffsets {
                var c = ClockSanity(parameters: settings.clock)
                c.restore(offset: offset)
                clocks[gw] = c
            }
        } else if !calibrationSeed.isEmpty {
            fusion.restore(workers: calibrationSeed)
        }
        restoreReorder(now: now)
    }

    /// An ack of the committed mark of each gateway's current boot (the boot of its latest status,
    /// or every boot when it sent none): published on every connect to the broker, so that
    /// gateways learn at once what the previous run committed at its end, or what acks a broker
    /// outage swallowed, instead of resending it.
    public func currentAcks() -> [Publication] {
        progress.committed.filter { key, _ in lastStatus[key.gateway]?.boot.map { $0 == key.boot } ?? true }
            .sorted { $0.key < $1.key }
            .map { ackPublication(gateway: $0.key.gateway, shard: $0.key.shard, GatewayAck(boot: $0.key.boot, seq: $0.value)) }
    }

    /// An ack to `gateway` (for a duplicate's re-ack too), on the ack topic of `shard` when sharded.
    public func ackPublication(gateway: String, shard: Int = 0, _ ack: GatewayAck) -> Publication {
        let topic = topics.ack(gateway, shard: settings.shards.layout.isSharded ? shard : nil)
        return Publication(topic: topic, payload: DevicePayloads.ack(ack), retain: false)
    }
}
