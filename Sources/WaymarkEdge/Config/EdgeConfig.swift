import Foundation
import WaymarkCore
import WaymarkMQTT

/// The edge agent's configuration: every key, its default and its meaning. Loaded from flags >
/// environment (`WAYMARK_EDGE_<KEY>`, dots as underscores) > YAML file > these defaults by
/// ``load(_:)``; documented for operators in deploy/edge.example.yaml and docs/edge.md.
public struct EdgeConfig: Sendable, Equatable {
    /// Where adverts come from.
    public enum Source: Sendable, Equatable, CustomStringConvertible {
        /// A local adapter by name (`hci0`) via libbluetooth.
        case adapter(String)
        /// A local adapter by its address (`hci:AA:BB:CC:DD:EE:FF`).
        case adapterAddress(String)
        /// An `hcidump --raw` capture or a sightings JSONL file.
        case replay(path: String)

        public var description: String {
            switch self {
            case .adapter(let name): name
            case .adapterAddress(let a): "hci:\(a)"
            case .replay(let p): "replay:\(p)"
            }
        }
    }

    /// `site`: path of the site file (tracking rules, site id).
    public var sitePath: String
    /// `gateway`: this gateway's id; must be one of the site file's gateways.
    public var gateway: String
    /// `source`: `hci0` (default), `hci:AA:BB:CC:DD:EE:FF` or `replay:FILE`.
    public var source: Source = .adapter("hci0")
    /// `topic_prefix`: default `waymark/v1/<site id>`.
    public var topicPrefix: String?
    /// `window_s`: aggregation window in seconds.
    public var windowS: Double = 1.0

    /// `scan.active`: send scan requests (more data, more air time); passive by default.
    public var scanActive = false
    /// `scan.interval_ms`, `scan.window_ms`: LE scan interval and window (2.5 … 10240 ms, window ≤ interval).
    public var scanIntervalMS: Double = 100
    public var scanWindowMS: Double = 100

    /// `replay.rate`: 1 = recorded speed, 2 = twice as fast, 0 = as fast as possible.
    public var replayRate: Double = 1
    /// `replay.event_interval_ms`: spacing of events in a capture without timestamps.
    public var replayEventIntervalMS: Double = 10
    /// `replay.exit_when_done`: stop once the replay is over and every batch is acknowledged by
    /// the broker (PUBACK), instead of staying up to resend until the aggregator acks.
    public var replayExitWhenDone = false
    /// `replay.start_at`: Unix time (wall clock) at which the replay's first event is due; later
    /// events follow at `replay.rate`. Gives several edges replaying side by side one shared
    /// clock (the demo starts one edge per gateway). Default: when the replay starts.
    public var replayStartAt: Double?

    /// The `mqtt.*` keys (url, client_id — default `waymark-edge-<gateway>` —, credentials, TLS,
    /// keepalive, max_inflight: batches sent and not yet PUBACKed at once, reconnect backoff).
    public var mqtt = MQTTSettings()

    /// `spool.dir`: spool directory (must be writable and persistent).
    public var spoolDir = "/var/lib/waymark-edge/spool"
    /// `spool.max_bytes`: size cap; the oldest batches are dropped (and counted) beyond it.
    public var spoolMaxBytes = 64 << 20
    /// `spool.segment_batches`: batches per segment file.
    public var spoolSegmentBatches = 60
    /// `spool.fsync`: flush each batch to the device before publishing it.
    public var spoolFsync = true
    /// `spool.resend_after_s`: resend a batch not acked by the aggregator after this long.
    public var spoolResendAfterS: Double = 30

    /// `publish.encoding`: the batches' wire form, `json` (the default and reference contract) or
    /// `protobuf` (proto/waymark_batch.proto: smaller, and cheaper for the aggregator to decode).
    /// The aggregator reads both on the same topic; a spooled batch is resent as it was written.
    public var publishEncoding: BatchEncoding = .json
    /// `publish.shards`: the site's shard count when several aggregators share its devices
    /// (docs/scaling.md §1): one batch per shard and window on `…/sightings/<shard>`, each shard
    /// with its own spool (`spool.dir/shard-K`) and acks. Every gateway of the site and every
    /// aggregator must use the same count; 1 (the default) is unsharded.
    public var publishShards = ShardLayout.single

    /// `status.interval_s`: republish the retained status this often (and on every change of state).
    public var statusIntervalS: Double = 10
    /// `metrics.host`, `metrics.port`: Prometheus endpoint; port 0 turns it off.
    public var metricsHost = "127.0.0.1"
    public var metricsPort = 9464
    /// `log.level`: trace, debug, info, notice, warning, error, critical.
    public var logLevel = "info"
    /// `pseudonym_secret` (secret): overrides the site file's `tracking.pseudonym_secret`.
    public var pseudonymSecret: String?

    public init(sitePath: String, gateway: String) {
        self.sitePath = sitePath
        self.gateway = gateway
    }

    /// Every key understood in the file, the environment and flags.
    public static let keys = [
        "site", "gateway", "source", "topic_prefix", "window_s",
        "scan.active", "scan.interval_ms", "scan.window_ms",
        "replay.rate", "replay.event_interval_ms", "replay.exit_when_done", "replay.start_at",
    ] + MQTTSettings.keys + [
        "spool.dir", "spool.max_bytes", "spool.segment_batches", "spool.fsync", "spool.resend_after_s",
        "publish.encoding", "publish.shards", "status.interval_s", "metrics.host", "metrics.port", "log.level", "pseudonym_secret",
    ]

    /// Keys whose values are never printed or logged.
    public static let secretKeys: Set<String> = MQTTSettings.secretKeys.union(["pseudonym_secret"])

    public var clientID: String { mqtt.clientID ?? "waymark-edge-\(gateway)" }

    /// The broker connection: URL, credentials (the URL's or the explicit ones) and TLS.
    public func connection() throws(MQTTError) -> MQTTConnection { try mqtt.connection() }
}
