import Foundation
import WaymarkCore
import WaymarkFusion
import WaymarkNotify

/// The aggregator's logic without I/O: takes MQTT messages with their receive time, validates,
/// de-duplicates and clock-checks them, runs the fusion engine, and accumulates what must be
/// written (`sealWrite()`) and published (`takePublications()`). The service around it owns the
/// threads, the broker and the database; tests drive it directly.
public struct AggregatorCore: Sendable {
    public struct Settings: Sendable {
        public var maxPayloadBytes = 1 << 20
        public var clock = ClockSanity.Parameters()
        public var rawSightings = false
        /// Seconds a gap in a gateway's sequence is waited for before the batches after it are taken.
        public var gapTimeoutS = 60.0
        /// Longest a batch is held for event-time ordering (`ReorderBuffer`); 0 = fuse in arrival order.
        public var reorderWindowS = 0.0
        /// After a gap in a gateway's sequence, how long the engine's clock waits at most for the
        /// missing batches (needs `reorderWindowS` > 0).
        public var catchUpS = 15.0
        /// Memory for batches parked behind gaps in their gateway's sequence.
        public var maxParkedBytes = 256 << 20
        /// Fusion workers (`FusionWorkers`): devices split among this many engines by a fixed hash
        /// of their id, a batch's parts fused in parallel. The results depend on the count (each
        /// worker calibrates itself from its own devices): `waymark replay --workers N` reproduces it.
        public var fusionWorkers = 1
        /// The site's shard layout and the shards this aggregator owns (one aggregator, unsharded, by default).
        public var shards = ShardOwnership.all(.single)
        public init(clock: ClockSanity.Parameters = ClockSanity.Parameters()) { self.clock = clock }
    }

    /// What became of one message.
    public enum Outcome: Equatable, Sendable {
        case accepted(sightings: Int)
        case rejected(RejectReason, gateway: String)
        /// Already processed; `ack` is the committed mark to re-send to the gateway (on the ack
        /// topic of `shard` when sharded), if any.
        case duplicate(gateway: String, ack: GatewayAck?, shard: Int = 0)
        case status(gateway: String)
        /// Not a topic the aggregator handles.
        case ignored
    }

    public let site: Site
    public let topics: Topics
    public let settings: Settings
    /// The fusion engines, one per worker (`Settings.fusionWorkers`).
    public internal(set) var fusion: FusionWorkers
    /// The site's notification rules over the engine's outputs (the same evaluator as `waymark replay`).
    public internal(set) var notifier: Notifier
    public internal(set) var progress = ProgressTracker()
    var decoder = BatchDecoder()
    var clocks: [String: ClockSanity] = [:]
    var pending = WriteBatch()
    /// Devices whose state changed by a timer or status since the last write (those heard are in `activity`).
    var changedDevices = Set<DeviceID>()
    var activity = DeviceActivity()
    /// The latest status recorded per gateway (restored from `gateway_status` at start).
    var lastStatus: [String: StatusSummary] = [:]
    /// Device handles of the batch being applied (kept to reuse its storage).
    var handles: [DeviceHandle] = []
    /// Latest evidence time processed (fusion lag = now − latest).
    public internal(set) var latest = 0.0
    /// The number of the last sealed write (`AggregatorCheckpoint.writeNumber`).
    public internal(set) var writeNumber = 0
    var outputs: [FusionOutput] = []
    var views = DeviceViews()
    /// Entrance regions by gateway index (for `entrance_heard`).
    let entranceRegionsByGateway: [[String]]
    public internal(set) var counts = RejectCounts()
    /// Accepted batches waiting for the event-time watermark.
    public internal(set) var reorder: ReorderBuffer<HeldBatch>
    /// Events to publish now (device state and monitored sets are coalesced in `views`).
    var publications: [Publication] = []
    /// For each device state in the last `takePublications()` whose live region changed, the
    /// evidence time of the second that changed it: the service measures how long after its
    /// evidence a live change reaches the broker (`waymark_aggregator_live_region_delay_seconds`).
    public internal(set) var publishedLiveChanges: [Double] = []
    /// Batches parked behind gaps, per (gateway, boot), and the memory they take.
    var gaps: [ProgressTracker.Key: ParkedGap] = [:]
    var parkedBytes = 0
    /// Gaps seen, and resend requests published for them.
    public internal(set) var gapsOpened = 0
    public internal(set) var resendRequests = 0
    /// The window end of the last batch fused per gateway (checkpointed: after a restart the
    /// engine waits for the gateways that were active to continue from there).
    var fusedEnds: [String: Double] = [:]

    public init(site: Site, topics: Topics, settings: Settings = Settings()) {
        self.site = site
        self.topics = topics
        self.settings = settings
        self.fusion = FusionWorkers(site: site, count: settings.fusionWorkers, shards: settings.shards.layout.count)
        self.notifier = Notifier(site: site)
        entranceRegionsByGateway = site.regionsByGateway.map { indices in
            indices.filter { site.regions[$0].isEntrance }.map { site.regions[$0].id }
        }
        views.monitoredSize = site.fusion.monitoredSetSize
        reorder = ReorderBuffer(maxLatenessS: settings.reorderWindowS)
    }

    // MARK: Messages

    /// Handles one message received at `receivedAt` (the aggregator's clock, Unix seconds).
    /// `retained` marks a retained message delivered on subscribe (status only). `prepared` is the
    /// payload already decoded by a `BatchPreparer` (`DecodeStage`); without it the core decodes.
    public mutating func handle(topic: String, payload: [UInt8], receivedAt: Double, retained: Bool = false,
                                prepared: PreparedBatch? = nil) -> Outcome {
        guard let (gateway, kind, shard) = topics.gatewayTopic(topic) else { return .ignored }
        switch kind {
        case "sightings":
            guard settings.shards.accepts(topicShard: shard) else { return reject(.shardMismatch, gateway: gateway, at: receivedAt) }
            return handleBatch(gateway: gateway, shard: shard ?? 0, payload: payload, receivedAt: receivedAt, prepared: prepared)
        case "status" where shard == nil:
            return handleStatus(gateway: gateway, payload: payload, receivedAt: receivedAt, retained: retained)
        default: return .ignored
        }
    }

    mutating func reject(_ reason: RejectReason, gateway: String, at t: Double) -> Outcome {
        let label = FieldRules.label(gateway)
        counts.add(reason)
        pending.rejections[.init(gateway: label, hour: Self.hour(t), reason: reason), default: 0] += 1
        return .rejected(reason, gateway: label)
    }

    mutating func handleBatch(gateway: String, shard: Int, payload: [UInt8], receivedAt: Double, prepared: PreparedBatch? = nil) -> Outcome {
        guard payload.count <= settings.maxPayloadBytes else { return reject(.oversize, gateway: gateway, at: receivedAt) }
        guard let g = site.gatewayIndex(gateway) else { return reject(.unknownGateway, gateway: gateway, at: receivedAt) }
        let decoded = prepared?.result ?? Result { () throws(BatchDecoder.Failure) in try decoder.decode(payload) }
        let batch: SightingBatch
        switch decoded {
        case .success(let b): batch = b
        case .failure(let error): return reject(error.reason, gateway: gateway, at: receivedAt)
        }
        guard batch.v == SightingBatch.currentVersion else { return reject(.version, gateway: gateway, at: receivedAt) }
        guard batch.gateway == gateway else { return reject(.gatewayMismatch, gateway: gateway, at: receivedAt) }
        // A gateway with another shard count puts devices in shards this layout does not: refused
        // (not acked) so that its batches stay spooled until the counts agree.
        // (Checked by the decode thread when it prepared the batch.)
        if settings.shards.layout.isSharded,
           !(prepared?.inTopicShard ?? settings.shards.layout.holdsOnly(batch, shard: shard)) {
            return reject(.shardMismatch, gateway: gateway, at: receivedAt)
        }
        let key = ProgressTracker.Key(gateway: gateway, boot: batch.boot, shard: shard)
        if progress.isDuplicate(key, seq: batch.seq) {
            counts.add(.duplicate)
            let ack = progress.committedMark(key, covering: batch.seq).map { GatewayAck(boot: batch.boot, seq: $0) }
            return .duplicate(gateway: gateway, ack: ack, shard: shard)
        }
        if batch.seq > progress.nextExpected(key) {
            return park(batch, key: key, gateway: g, payload: payload, receivedAt: receivedAt)
        }
        let outcome = take(batch, key: key, gateway: g, payload: payload, receivedAt: receivedAt, now: receivedAt)
        drainParked(key, now: receivedAt)
        return outcome
    }

    /// Takes in the batch that follows its gateway's mark: clock check, then the reorder stage.
    @discardableResult
    mutating func take(_ batch: SightingBatch, key: ProgressTracker.Key, gateway g: Int, payload: [UInt8],
                       receivedAt: Double, now: Double) -> Outcome {
        var batch = batch
        let gateway = key.gateway
        guard Self.timesAreConsistent(batch) else {
            settle(key, seq: batch.seq, at: now)  // acked with the next write: resending cannot fix it
            return reject(.badTimes, gateway: gateway, at: receivedAt)
        }
        var clock = clocks[gateway] ?? ClockSanity(parameters: settings.clock)
        let verdict = clock.judge(windowStart: batch.start, windowEnd: batch.end, receivedAt: receivedAt)
        clocks[gateway] = clock
        guard case .accept(let offset) = verdict else {
            settle(key, seq: batch.seq, at: now)
            return reject(.clockAbsurd, gateway: gateway, at: receivedAt)
        }
        if offset != 0 { Self.shift(&batch, by: offset) }
        progress.markReceived(key, seq: batch.seq)
        // The payload is kept only where rows are stored per batch (raw sightings): should
        // PostgreSQL refuse them, the batch goes to the quarantine table as received.
        let held = HeldBatch(key: key, seq: batch.seq, batch: batch, gateway: g, offset: offset, receivedAt: receivedAt,
                             payload: settings.rawSightings ? payload : [])
        fuse(reorder.insert(held, source: gateway, rank: g, windowEnd: batch.end, at: now))
        if reorder.catchingUp > 0 && !hasGap(gateway) { reorder.progressed(gateway) }
        return .accepted(sightings: batch.sightings.count)
    }

    static func timesAreConsistent(_ b: SightingBatch) -> Bool {
        guard b.start.isFinite, b.end.isFinite, b.end >= b.start, b.end - b.start <= 3600 else { return false }
        for e in b.sightings {
            guard e.first.isFinite, e.last.isFinite, e.last >= e.first,
                  e.first >= b.start - 1, e.last <= b.end + 1 else { return false }
        }
        return true
    }

    static func shift(_ b: inout SightingBatch, by offset: Double) {
        b.start += offset
        b.end += offset
        for i in b.sightings.indices {
            b.sightings[i].first += offset
            b.sightings[i].last += offset
        }
    }

    static func hour(_ t: Double) -> Double { (t / 3600).rounded(.down) * 3600 }
}
