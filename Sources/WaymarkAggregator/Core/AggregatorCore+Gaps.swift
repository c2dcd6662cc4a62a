import WaymarkCore

/// Batches of one (gateway, boot) that arrived after a gap in its sequence numbers, parked until
/// the missing ones come (issue 19). Acks are cumulative, so nothing after a gap may be processed
/// before the gap is filled; rejecting those batches (as before) made the gateway resend all of
/// them, and made the engine see that gateway's evidence late and out of order.
struct ParkedGap: Sendable {
    struct Batch: Sendable {
        var batch: SightingBatch
        var payload: [UInt8]
        var receivedAt: Double
        var bytes: Int
    }

    /// When the gap was first seen (receive clock).
    var since: Double
    /// When the gateway was last asked to resend the missing batches.
    var lastRequest = -Double.infinity
    var batches: [UInt64: Batch] = [:]
}

extension AggregatorCore {
    /// A gateway that has not answered a resend request is asked again after this long (s).
    static let resendRequestIntervalS = 5.0

    /// Whether some boot of `gateway` has a gap open.
    func hasGap(_ gateway: String) -> Bool { gaps.keys.contains { $0.gateway == gateway } }

    /// Batches parked behind a gap.
    public var parkedBatches: Int { gaps.values.reduce(0) { $0 + $1.batches.count } }

    /// Parks a batch that arrived after a gap, asks its gateway to resend the missing ones at once,
    /// and holds the event-time watermark at the gateway's latest evidence while it catches up.
    /// When parking would exceed `maxParkedBytes` the batch is refused (out of order) and the
    /// gateway resends it later, as before parking existed.
    mutating func park(_ batch: SightingBatch, key: ProgressTracker.Key, gateway g: Int, payload: [UInt8],
                       receivedAt: Double) -> Outcome {
        let isNew = gaps[key] == nil
        var gap = gaps[key] ?? ParkedGap(since: receivedAt)
        if gap.batches[batch.seq] != nil {
            counts.add(.duplicate)
            return .duplicate(gateway: key.gateway, ack: nil, shard: key.shard)
        }
        // The decoded batch costs about as much again as its payload (entries of ~64 bytes).
        let bytes = payload.count + batch.sightings.count * 64 + 128
        guard parkedBytes + bytes <= settings.maxParkedBytes else {
            counts.add(.outOfOrder)
            return .rejected(.outOfOrder, gateway: key.gateway)
        }
        gap.batches[batch.seq] = ParkedGap.Batch(batch: batch, payload: payload, receivedAt: receivedAt, bytes: bytes)
        parkedBytes += bytes
        gaps[key] = gap
        if isNew {
            gapsOpened += 1
            reorder.holdForCatchUp(key.gateway, until: receivedAt + settings.catchUpS)
        }
        requestResend(key, at: receivedAt)
        return .accepted(sightings: batch.sightings.count)
    }

    /// Takes the parked batches of `key` that now follow its mark, in sequence order; when none
    /// is left parked the gateway has caught up.
    mutating func drainParked(_ key: ProgressTracker.Key, now: Double) {
        guard var gap = gaps[key] else { return }
        guard let g = site.gatewayIndex(key.gateway) else { return }
        var took = false
        while let p = gap.batches.removeValue(forKey: progress.nextExpected(key)) {
            parkedBytes -= p.bytes
            took = true
            take(p.batch, key: key, gateway: g, payload: p.payload, receivedAt: p.receivedAt, now: now)
        }
        if gap.batches.isEmpty {
            gaps[key] = nil
            if !hasGap(key.gateway) { reorder.caughtUp(key.gateway) }
        } else {
            if took {  // a further gap: timed and asked for from now
                gap.since = now
                gap.lastRequest = -.infinity
            }
            gaps[key] = gap
            if took { requestResend(key, at: now) }
        }
    }

    /// Publishes a resend request for the batches missing before the first parked one (at most
    /// once per `resendRequestIntervalS` per gap). Its `seq` is the committed mark, so it is also
    /// an ordinary ack.
    mutating func requestResend(_ key: ProgressTracker.Key, at now: Double) {
        guard var gap = gaps[key], now - gap.lastRequest >= Self.resendRequestIntervalS,
              let first = gap.batches.keys.min() else { return }
        gap.lastRequest = now
        gaps[key] = gap
        resendRequests += 1
        let ack = GatewayAck(boot: key.boot, seq: progress.committed[key] ?? 0,
                             resendFrom: progress.nextExpected(key), resendTo: first)
        publications.append(ackPublication(gateway: key.gateway, shard: key.shard, ack))
    }

    /// Gaps older than `gapTimeoutS` are given up on (the missing batches count as lost, in
    /// `progress.skipped`) and their parked batches taken; the others are asked for again.
    mutating func expireGaps(at now: Double) {
        guard !gaps.isEmpty else { return }
        for key in gaps.keys.sorted() {
            guard let gap = gaps[key] else { continue }
            if now - gap.since >= settings.gapTimeoutS, let first = gap.batches.keys.min() {
                progress.skip(key, to: first)
                drainParked(key, now: now)
            } else {
                requestResend(key, at: now)
            }
        }
    }
}
