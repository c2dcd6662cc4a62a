import WaymarkCore

extension ForeignBridge {
    /// What is due at `now`: the batches of windows that have ended, numbered in their receiver's
    /// current boot, and each receiver's status when it changed or the heartbeat interval passed.
    public mutating func tick(now: Double) -> [Output] {
        var out: [Output] = []
        for batch in pending { out += number(batch) }
        pending.removeAll(keepingCapacity: true)
        for i in receivers.indices {
            if let batch = receivers[i].windower.advance(to: now) { out += number(batch) }
            let state = receivers[i].liveness.state(at: now)
            if settings.emptyBatches, state == .online, let empty = receivers[i].emptyBatch(now: now, window: settings.windowS) {
                out += number(empty)
            }
            if state != receivers[i].announced || now - receivers[i].announcedAt >= settings.statusIntervalS {
                out.append(.status(status(i, state, now: now)))
            }
        }
        return out
    }

    /// At shutdown: every open window's batch, then each receiver's `offline` status (a clean
    /// disconnect does not trigger the broker's last will).
    public mutating func finish(now: Double) -> [Output] {
        var out = tick(now: now)
        for i in receivers.indices {
            if let batch = receivers[i].windower.flush() { out += number(batch) }
        }
        for i in receivers.indices { out.append(.status(status(i, .offline, now: now))) }
        return out
    }

    /// The status the broker publishes as `gateway`'s last will.
    public func lastWill(for gateway: String) -> GatewayStatus {
        GatewayStatus(state: .offline, gateway: gateway, version: settings.version, boot: boot(of: gateway),
                      spoolDepth: 0, spoolDropped: 0, scan: "off", t: nil)
    }

    /// A batch of `gateway` could not be handed to the broker: later batches start a new boot, so
    /// that the aggregator sees no gap in a sequence.
    public mutating func batchNotSent(gateway: String) { restartBoot(gateway) }

    /// `gateway`'s connection to the broker came back: a new boot (batches in flight when it broke
    /// may be lost), announced at once.
    public mutating func reconnected(gateway: String) { restartBoot(gateway) }

    private mutating func restartBoot(_ gateway: String) {
        guard let i = receivers.firstIndex(where: { $0.receiver.gateway == gateway }) else { return }
        receivers[i].boot = makeBoot()
        receivers[i].nextSeq = Array(repeating: 1, count: settings.shards.count)
        receivers[i].announcedAt = -.infinity
        counters.bootsRestarted += 1
    }

    /// The window's batch numbered in its receiver's boot: itself unsharded, one batch per shard
    /// (empty ones too, each shard numbered on its own) with shards.
    private mutating func number(_ batch: SightingBatch) -> [Output] {
        guard let i = receivers.firstIndex(where: { $0.receiver.gateway == batch.gateway }) else { return [] }
        receivers[i].coveredUpTo = max(receivers[i].coveredUpTo, batch.end)
        let layout = settings.shards
        return layout.split(batch).enumerated().map { k, part in
            var b = part
            b.boot = receivers[i].boot
            b.seq = receivers[i].nextSeq[k]
            receivers[i].nextSeq[k] += 1
            counters.batches += 1
            return .batch(b, shard: layout.isSharded ? k : nil)
        }
    }

    private mutating func status(_ i: Int, _ state: GatewayStatus.State, now: Double) -> GatewayStatus {
        receivers[i].announced = state
        receivers[i].announcedAt = now
        return GatewayStatus(state: state, gateway: receivers[i].receiver.gateway, version: settings.version,
                             boot: receivers[i].boot, spoolDepth: 0, spoolDropped: 0,
                             scan: state == .online ? "on" : "off", t: now)
    }
}

/// One receiver's windowing, numbering and liveness.
struct ReceiverState: Sendable {
    let receiver: ForeignGateway
    var windower: SightingWindower
    var boot: String
    /// The next sequence number per shard (one entry unsharded).
    var nextSeq: [UInt64]
    var liveness: ReceiverLiveness
    /// The state last published, and when.
    var announced: GatewayStatus.State?
    var announcedAt = -Double.infinity
    /// The end of the latest window a batch (with readings or empty) was published for.
    var coveredUpTo = -Double.infinity

    init(receiver: ForeignGateway, boot: String, window: Double, silenceS: Double, shards: Int = 1) {
        self.receiver = receiver
        self.boot = boot
        nextSeq = Array(repeating: 1, count: shards)
        windower = SightingWindower(window: window, gateway: receiver.gateway, boot: "")
        liveness = ReceiverLiveness(silenceS: silenceS)
    }

    /// An empty batch for the window that ended last before `now`, when no batch covers it and no
    /// reading is waiting in an open window that started before it ended.
    func emptyBatch(now: Double, window: Double) -> SightingBatch? {
        let end = (now / window).rounded(.down) * window
        guard coveredUpTo < end - window / 2 else { return nil }
        if let open = windower.openWindowStart, open < end { return nil }
        return SightingBatch(gateway: receiver.gateway, boot: "", seq: 0, start: end - window, end: end, sightings: [])
    }

    /// Adds a reading at its arrival time; one earlier than the open window (the clock stepped
    /// back) goes into the open window at its start, so the batch's times stay consistent.
    mutating func add(device: DeviceID, rssi: Double, tx: Double?, at now: Double) -> SightingBatch? {
        let t = max(now, windower.openWindowStart ?? now)
        return windower.add(device: device, rssi: rssi, tx: tx, time: t)
    }
}

extension ForeignBridge {
    /// The status `gateway` is published with at `now` (its receiver's liveness).
    public func state(of gateway: String, at now: Double) -> GatewayStatus.State? {
        receivers.first { $0.receiver.gateway == gateway }?.liveness.state(at: now)
    }
}
