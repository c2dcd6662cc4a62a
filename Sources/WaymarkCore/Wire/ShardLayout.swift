/// How the devices of a site are split among aggregators (DESIGN.md §7, docs/scaling.md §1).
///
/// Fusion needs every sighting of a device in one process, so the split is by device, never by
/// gateway: each gateway computes a device's shard, `FNV-1a-64(id's UTF-8) mod count`, and
/// publishes one batch per shard and window on `…/gateways/<gw>/sightings/<shard>`, each shard
/// with its own sequence numbers, spool and acks (`…/gateways/<gw>/ack/<shard>`). Each aggregator
/// subscribes to the shards it owns. One shard (`count` 1, the default) is the unsharded layout:
/// today's topics `…/sightings` and `…/ack`, no shard level.
///
/// The count is fixed for the life of an installation's data (a device's shard must not change
/// while its state lives in an aggregator): choose more shards than aggregators, and add capacity
/// by moving shards between aggregators, not by changing the count.
public struct ShardLayout: Hashable, Sendable, CustomStringConvertible {
    /// Largest shard count accepted (topics and configuration are checked against it).
    public static let maxCount = 1024
    /// The unsharded layout.
    public static let single = ShardLayout(uncheckedCount: 1)

    /// Number of shards, 1…``maxCount``.
    public let count: Int

    /// A layout of `count` shards, or nil when `count` is outside 1…``maxCount``.
    public init?(count: Int) {
        guard (1...Self.maxCount).contains(count) else { return nil }
        self.count = count
    }

    private init(uncheckedCount: Int) { self.count = uncheckedCount }

    /// More than one shard: batches and acks carry the shard in their topic.
    public var isSharded: Bool { count > 1 }

    public var description: String { isSharded ? "\(count) shards" : "unsharded" }

    /// FNV-1a (64 bit) of the id's UTF-8 bytes: the hash behind shards and fusion workers, fixed
    /// forever (every gateway, aggregator, restart and replay place a device alike).
    public static func hash(_ device: DeviceID) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in device.rawValue.utf8 {
            h ^= UInt64(byte)
            h = h &* 0x0000_0100_0000_01b3
        }
        return h
    }

    /// The shard `device` belongs to, 0…count−1.
    public func shard(of device: DeviceID) -> Int {
        isSharded ? Int(Self.hash(device) % UInt64(count)) : 0
    }

    /// Whether every device of `batch` belongs to `shard`: a gateway publishing with another shard
    /// count puts devices in shards this layout does not. Always true unsharded.
    public func holdsOnly(_ batch: SightingBatch, shard: Int) -> Bool {
        !isSharded || batch.sightings.allSatisfy { self.shard(of: $0.device) == shard }
    }

    /// One batch per shard, in shard order, each with the sightings of its shard's devices (in the
    /// batch's order) and the batch's window; a shard without sightings gets an empty batch, which
    /// tells its aggregator that the gateway is alive and its window is complete. Sequence numbers
    /// are left as they are: each shard numbers its own (`SightingBatch.seq`).
    public func split(_ batch: SightingBatch) -> [SightingBatch] {
        guard isSharded else { return [batch] }
        var parts = [SightingBatch](repeating: SightingBatch(gateway: batch.gateway, boot: batch.boot, seq: batch.seq,
                                                             start: batch.start, end: batch.end, sightings: []),
                                    count: count)
        for e in batch.sightings { parts[shard(of: e.device)].sightings.append(e) }
        return parts
    }
}
