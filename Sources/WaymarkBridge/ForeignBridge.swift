import WaymarkCore

/// The pure core of `waymark bridge` (docs/foreign-gateways.md): takes the MQTT messages of
/// ESPresense nodes and Theengs Gateway / OpenMQTTGateway receivers with the time they arrived,
/// and returns what to publish so that each receiver looks like a `waymark-edge` gateway to the
/// aggregator — the same `SightingBatch` per window with a boot id and contiguous sequence numbers,
/// and the same retained status. No I/O, no clock: the runtime passes the time in.
///
/// Readings are stamped with their arrival time (neither format carries one) and windowed per
/// receiver. A receiver's batches are numbered 1, 2, … within a boot; whenever the runtime could
/// not hand a batch to the broker, or reconnects, the receiver starts a new boot, so the aggregator
/// never waits for a batch that will not come (there is no spool to resend it from).
public struct ForeignBridge: Sendable {
    public struct Settings: Sendable, Equatable {
        /// The window of each batch, seconds.
        public var windowS = 1.0
        /// How often a receiver's status is re-published while nothing changes (a heartbeat for the
        /// aggregator's `gateway_silence_s`).
        public var statusIntervalS = 10.0
        /// A receiver with no status of its own counts as offline after this long without a reading.
        public var receiverSilenceS = 60.0
        /// The ESPresense topic prefix (the firmware's is `espresense`).
        public var espresensePrefix = "espresense"
        /// The `version` field of the statuses.
        public var version = "waymark-bridge"
        /// Larger messages are rejected (`oversize`).
        public var maxPayloadBytes = 65_536
        /// Publish an empty batch for each window in which an online receiver heard no tracked
        /// device. The aggregator's engine only moves on with evidence time, and statuses do not
        /// advance it: without these, the last device to leave a quiet house would stay in its
        /// last room until someone else is heard.
        public var emptyBatches = true
        /// The site's shard layout when several aggregators share its devices (docs/scaling.md §1):
        /// each window's batch goes out as one batch per shard, each shard numbered on its own.
        public var shards = ShardLayout.single

        public init() {}
    }

    /// What the runtime publishes.
    public enum Output: Sendable, Equatable {
        /// A batch, for `shard`'s topic when the layout is sharded (nil: unsharded).
        case batch(SightingBatch, shard: Int?)
        case status(GatewayStatus)

        public var gateway: String {
            switch self {
            case .batch(let b, _): b.gateway
            case .status(let s): s.gateway
            }
        }
    }

    /// What became of one message (for logging; counts are in ``counters``).
    public enum Outcome: Sendable, Equatable {
        case reading(gateway: String)
        case filtered(gateway: String, ForeignIdentityMapper.DropReason)
        case rejected(receiver: String, ForeignMessageError)
        case status(gateway: String)
        case unmappedRoom(String)
        case ignored
    }

    public let settings: Settings
    public let router: ForeignTopicRouter
    public internal(set) var counters = BridgeCounters()
    var mapper: ForeignIdentityMapper
    var receivers: [ReceiverState]
    let makeBoot: @Sendable () -> String

    /// - Parameters:
    ///   - secret: overrides the site file's pseudonym secret.
    ///   - makeBoot: a new random boot id (`waymark-edge` uses 16 hex digits).
    public init(site: Site, settings: Settings = .init(), secret: String? = nil, makeBoot: @escaping @Sendable () -> String) {
        self.settings = settings
        self.makeBoot = makeBoot
        router = ForeignTopicRouter(receivers: site.foreignGateways, espresensePrefix: settings.espresensePrefix)
        mapper = ForeignIdentityMapper(rules: site.tracking, secret: secret)
        receivers = site.foreignGateways.map { r in
            ReceiverState(receiver: r, boot: makeBoot(), window: settings.windowS, silenceS: settings.receiverSilenceS,
                          shards: settings.shards.count)
        }
    }

    /// The site gateways the bridge stands for, in `foreign_gateways` order.
    public var gateways: [String] { receivers.map(\.receiver.gateway) }

    /// The boot each receiver's next batch belongs to.
    public func boot(of gateway: String) -> String? { receivers.first { $0.receiver.gateway == gateway }?.boot }

    /// Takes one message received at Unix time `now`.
    public mutating func receive(topic: String, payload: [UInt8], retained: Bool, at now: Double) -> Outcome {
        switch router.route(topic) {
        case .other:
            return .ignored
        case .unmappedRoom(let room):
            counters.messages[ForeignReport.Format.espresense.rawValue, default: 0] += 1
            count(.unmapped)
            return .unmappedRoom(room)
        case .status(let i):
            counters.statusMessages += 1
            guard receivers[i].liveness.status(payload) else {
                count(.malformed)
                return .rejected(receiver: receivers[i].receiver.gateway,
                                 .init(.malformed, "status message is neither 'online' nor 'offline'; check the receiver's last-will topic (status_topic)"))
            }
            return .status(gateway: receivers[i].receiver.gateway)
        case .espresense(let i, let id):
            counters.messages[ForeignReport.Format.espresense.rawValue, default: 0] += 1
            return reading(i, payload: payload, retained: retained, now: now) { () throws(ForeignMessageError) in
                try ESPresensePayload.parse(payload, topicID: id)
            }
        case .theengs(let i, let level):
            counters.messages[ForeignReport.Format.theengs.rawValue, default: 0] += 1
            return reading(i, payload: payload, retained: retained, now: now) { () throws(ForeignMessageError) in
                try TheengsPayload.parse(payload, topicLevel: level)
            }
        }
    }

    private mutating func reading(_ i: Int, payload: [UInt8], retained: Bool, now: Double,
                                  parse: () throws(ForeignMessageError) -> ForeignReport) -> Outcome {
        let gateway = receivers[i].receiver.gateway
        func reject(_ error: ForeignMessageError) -> Outcome {
            count(error.reason)
            return .rejected(receiver: gateway, error)
        }
        guard payload.count <= settings.maxPayloadBytes else {
            return reject(.init(.oversize, "message of \(payload.count) bytes is larger than \(settings.maxPayloadBytes)"))
        }
        guard !retained else {
            return reject(.init(.retained, "a retained reading has no known age and is not used; the receiver should publish readings without the retain flag"))
        }
        let report: ForeignReport
        do { report = try parse() } catch { return reject(error) }
        guard report.rssi.isFinite, report.rssi >= -127, report.rssi <= 0 else {
            return reject(.init(.implausibleRSSI, "RSSI \(report.rssi) dBm is outside −127…0 dBm; the reading is not used"))
        }
        receivers[i].liveness.reading(at: now)
        let decision = mapper.map(report, time: now)
        guard case .tracked(let device) = decision else {
            if case .dropped(let reason) = decision { counters.filtered[reason.rawValue, default: 0] += 1; return .filtered(gateway: gateway, reason) }
            return .ignored
        }
        var tx = report.measuredPower
        if let t = tx, !(t.isFinite && t >= -100 && t <= 20) {
            counters.implausibleTx += 1
            tx = nil
        }
        if let open = receivers[i].windower.openWindowStart, now < open { counters.lateReadings += 1 }
        if let batch = receivers[i].add(device: device, rssi: report.rssi, tx: tx, at: now) { pending.append(batch) }
        counters.readings += 1
        return .reading(gateway: gateway)
    }

    /// Batches closed by readings, handed out by the next ``tick(now:)``.
    var pending: [SightingBatch] = []

    private mutating func count(_ reason: ForeignRejection) { counters.rejected[reason.rawValue, default: 0] += 1 }
}
