import WaymarkCore
import WaymarkFusion
import WaymarkNotify

/// Everything one PostgreSQL transaction stores: the rows derived from the batches processed
/// since the previous write, the device checkpoints and gateway high-water marks as of the end of
/// those batches. Committing it as one unit makes every batch count exactly once.
public struct WriteBatch: Sendable {
    public struct Event: Sendable, Hashable {
        public var device: DeviceID
        public var t: Double
        /// enter, exit, unknown or region_change.
        public var kind: String
        public var region: String?
        public var proximity: String?
        public var distanceM: Double?
    }

    public struct HourKey: Hashable, Sendable {
        public var gateway: String
        public var hour: Double
    }

    public struct Ingest: Sendable {
        public var batches = 0
        public var sightings = 0
        public var clockCorrected = 0
        public var lastBatchAt = -Double.infinity
        public var maxOffsetS = 0.0
    }

    public struct RejectionKey: Hashable, Sendable {
        public var gateway: String
        public var hour: Double
        public var reason: RejectReason
    }

    public struct EntranceKey: Hashable, Sendable {
        public var region: String
        public var device: DeviceID
        public var hour: Double
    }

    public struct Status: Sendable, Hashable {
        public var gateway: String
        public var receivedAt: Double
        public var status: GatewayStatus
        /// The message as received (for the quarantine table, should PostgreSQL refuse the row).
        public var payload: [UInt8] = []
    }

    /// A batch whose raw sightings this write stores, as received (for the quarantine table).
    public struct RawSource: Sendable {
        public var gateway: String
        public var boot: String
        /// The batch's shard (0 unsharded): with shards a batch is (gateway, boot, shard, seq).
        public var shard: Int = 0
        public var seq: UInt64
        public var receivedAt: Double
        public var payload: [UInt8]
    }

    public struct RawSighting: Sendable {
        public var gateway: String
        public var boot: String
        public var shard: Int = 0
        public var seq: UInt64
        public var entry: SightingBatch.Entry
    }

    public var visits: [FusionOutput.Visit] = []
    public var journeys: [FusionOutput.Journey] = []
    public var transitions: [FusionOutput.Transition] = []
    public var events: [Event] = []
    /// First and last sighting time per device in these batches.
    public var devices: [DeviceID: (first: Double, last: Double)] = [:]
    public var entranceHeard: [EntranceKey: (first: Double, last: Double)] = [:]
    public var statuses: [Status] = []
    public var ingest: [HourKey: Ingest] = [:]
    public var rejections: [RejectionKey: Int] = [:]
    public var rawSightings: [RawSighting] = []
    /// The batches `rawSightings` came from (one per batch with sightings).
    public var rawSources: [RawSource] = []
    /// Notifications the rules sent (docs/notifications.md): stored with the marks of the batches
    /// that caused them, and delivered (MQTT, webhooks) only after the commit.
    public var notifications: [RuleNotification] = []
    /// The notifier's state of the devices whose state changed (the `notification_state` table).
    public var notifierStates: [NotifierCheckpoint] = []
    /// Checkpoints of the devices that changed.
    public var checkpoints: [DeviceCheckpoint] = []
    /// Devices the engine forgot (`forget_after_s`): their checkpoints are deleted, before
    /// `checkpoints` are stored (a device forgotten and heard again has both).
    public var forgottenDevices: [DeviceID] = []
    public var aggregatorState = AggregatorCheckpoint()
    /// New high-water marks; acked after the commit.
    public var progress: [ProgressTracker.Key: UInt64] = [:]
    /// Sightings in the batches covered (for metrics and the benchmark).
    public var sightingCount = 0

    public init() {}

    /// Rows this batch will write (the bounded write queue counts these).
    public var rowCount: Int {
        visits.count + journeys.count + transitions.count + events.count + devices.count + entranceHeard.count
            + statuses.count + ingest.count + rejections.count + rawSightings.count + checkpoints.count + progress.count
            + forgottenDevices.count + notifications.count + notifierStates.count + 1
    }

    public var isEmpty: Bool {
        visits.isEmpty && journeys.isEmpty && transitions.isEmpty && events.isEmpty && devices.isEmpty
            && statuses.isEmpty && ingest.isEmpty && rejections.isEmpty && progress.isEmpty && checkpoints.isEmpty
            && forgottenDevices.isEmpty && notifications.isEmpty && notifierStates.isEmpty
    }
}

/// Site-wide state saved beside the device checkpoints.
public struct AggregatorCheckpoint: Codable, Sendable, Equatable {
    /// The engine's next 1-second tick (evidence time).
    public var nextTick: Double = -1
    /// The end of the latest second the engine's evidence reached (`EngineFeed.evidenceEnd`; nil:
    /// none yet, or written by an aggregator that did not keep it).
    public var evidenceEnd: Double?
    /// Latest evidence time processed.
    public var latest: Double = 0
    /// Clock offsets per gateway (seconds added to its times).
    public var clockOffsets: [String: Double] = [:]
    /// What the fusion engine learned about the venue's radio (self-calibration).
    public var calibration: CalibrationCheckpoint?
    /// The engine's view of each gateway's health (so a restart does not take the aggregator's
    /// own downtime for the gateways' silence).
    public var gatewayHealth: [String: GatewayHealthCheckpoint]?
    /// The window end of the last batch fused per gateway (`AggregatorCore.restoreReorder`).
    public var gatewayEnds: [String: Double]?
    /// The number of the write this state was committed with (1, 2, …; 0: none yet). Stored in the
    /// same transaction as everything else, so after a commit whose reply was lost the writer can
    /// tell whether it committed by reading it back (`AggregatorStore.committedWrite`).
    public var writeNumber: Int = 0
    /// Each fusion worker's tick, calibration and gateway health, with more than one worker
    /// (`fusion.workers`); the fields above then hold worker 0's.
    public var fusionWorkers: [FusionWorkerCheckpoint]?
    public init() {}
}
