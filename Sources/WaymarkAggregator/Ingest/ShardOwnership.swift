import WaymarkCore

/// The site's shard layout and the shards this aggregator owns (`shards.count`, `shards.own`;
/// docs/scaling.md §1). The aggregator takes the batches of its shards only, restores only its
/// shards' devices and high-water marks, and keeps its engine checkpoint (`aggregator_state`)
/// under ``checkpointKey``, so several aggregators share one database without touching each
/// other's rows: every other row is keyed by device, and the devices are split by shard.
public struct ShardOwnership: Sendable, Hashable, CustomStringConvertible {
    public let layout: ShardLayout
    /// The shards owned, ascending, without repeats; at least one.
    public let owned: [Int]

    /// Every shard of `layout`: the whole site (the only choice unsharded).
    public static func all(_ layout: ShardLayout) -> ShardOwnership {
        ShardOwnership(layout: layout, checked: Array(0..<layout.count))
    }

    /// The shards `owned` of `layout`, or a message saying what is wrong with them.
    public static func make(layout: ShardLayout, owned: [Int]) -> Result<ShardOwnership, ShardOwnershipError> {
        let set = Set(owned)
        guard !set.isEmpty else { return .failure(.init("no shard owned: list at least one of 0…\(layout.count - 1)")) }
        if let bad = owned.first(where: { !(0..<layout.count).contains($0) }) {
            return .failure(.init("shard \(bad) is not one of the \(layout.count) shards (0…\(layout.count - 1))"))
        }
        return .success(ShardOwnership(layout: layout, checked: set.sorted()))
    }

    private init(layout: ShardLayout, checked: [Int]) {
        self.layout = layout
        self.owned = checked
    }

    /// Every shard is owned: this aggregator alone covers the site.
    public var ownsAll: Bool { owned.count == layout.count }

    public func owns(shard: Int) -> Bool { owned.contains(shard) }

    public func owns(device: DeviceID) -> Bool { ownsAll || owns(shard: layout.shard(of: device)) }

    /// The row of `aggregator_state` this aggregator checkpoints to: empty when it owns the whole
    /// site (as every aggregator before shards did), else `owned/count` (`0,3/4`). Moving a shard
    /// changes it: the new owner starts its engine clock and calibration afresh while the devices
    /// it takes over keep their own checkpoints.
    public var checkpointKey: String {
        ownsAll ? "" : owned.map(String.init).joined(separator: ",") + "/\(layout.count)"
    }

    /// Gateway status history (`gateway_status`) is recorded by the owner of shard 0 only, so that
    /// several aggregators do not record each status once each.
    public var recordsGatewayStatus: Bool { owns(shard: 0) }

    /// The topics to subscribe to: the owned shards' batches, the gateways' status, and the
    /// batches of the other layout (unsharded batches when sharded, sharded ones when not), which
    /// are refused with `shard_mismatch` so that a gateway configured with another shard count is
    /// seen at once rather than silently missing.
    public func subscriptions(_ topics: Topics) -> [String] {
        var out: [String] = []
        if layout.isSharded {
            out.append(topics.allSightings)
            out += owned.map { topics.allSightings(shard: $0) }
        } else {
            out += [topics.allSightings, topics.allShardedSightings]
        }
        out.append(topics.allStatus)
        return out
    }

    /// Whether a batch on a topic with shard level `shard` (nil: none) belongs to this aggregator.
    public func accepts(topicShard shard: Int?) -> Bool {
        switch (layout.isSharded, shard) {
        case (false, nil): true
        case (true, let s?): owns(shard: s)
        default: false
        }
    }

    /// What another aggregator's status says it owns that this one owns too (empty: nothing, or
    /// not a running sharded aggregator of another run). A different shard count is a conflict on
    /// every shard: the two split the devices differently.
    public func conflicts(with status: ServiceStatus, ownInstance: String) -> [Int] {
        guard layout.isSharded, status.state == .online, status.service == "waymark-aggregator",
              let instance = status.instance, instance != ownInstance, let theirs = status.shards else { return [] }
        guard status.shardCount == layout.count else { return owned }
        return owned.filter(theirs.contains)
    }

    public var description: String {
        layout.isSharded ? "shards \(owned.map(String.init).joined(separator: ",")) of \(layout.count)" : "unsharded"
    }
}

public struct ShardOwnershipError: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ description: String) { self.description = description }
}
