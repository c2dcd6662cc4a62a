import WaymarkJSON

/// Which running aggregator owns each shard of a site, from the aggregators' retained statuses
/// (`ServiceStatus` on `…/aggregator/status[/<shards>]`, docs/scaling.md §1). The console shows it
/// (who owns what, and the errors: a shard with no owner or with two); `waymark homeassistant`
/// makes each device's entities available only while its shard has a running owner.
public struct ShardCoverage: Sendable, Equatable {
    /// One running aggregator: its key (the status topic's level after `…/aggregator/status`, ''
    /// for that topic itself), its shards (nil: the whole site) and the shard count it declares.
    public struct Owner: Sendable, Equatable {
        public var key: String
        public var shards: [Int]?
        public var shardCount: Int?

        public init(key: String, shards: [Int]?, shardCount: Int?) {
            self.key = key
            self.shards = shards
            self.shardCount = shardCount
        }
    }

    /// Shards of the site (1: unsharded), as the running aggregators declare it (the largest).
    public var count: Int
    /// Per shard, the keys of the running aggregators that own it.
    public var owners: [[String]]
    /// The shard counts the running aggregators declare; more than one is a misconfiguration.
    public var declaredCounts: [Int]

    public init(count: Int, owners: [[String]], declaredCounts: [Int]) {
        self.count = count
        self.owners = owners
        self.declaredCounts = declaredCounts
    }

    /// The coverage by the running aggregators `online`; nil when none runs.
    public init?(online: [Owner]) {
        guard !online.isEmpty else { return nil }
        let sorted = online.sorted { $0.key < $1.key }
        let declared = Set(sorted.compactMap(\.shardCount)).sorted()
        count = min(max(1, declared.last ?? 1), ShardLayout.maxCount)
        owners = (0..<count).map { k in sorted.filter { $0.shards.map { $0.contains(k) } ?? true }.map(\.key) }
        declaredCounts = declared
    }

    /// Shards no running aggregator owns: their batches wait in the gateways' spools.
    public var unowned: [Int] { owners.indices.filter { owners[$0].isEmpty } }
    /// Shards two or more running aggregators own: both fuse those devices and write them twice.
    public var doubled: [Int] { owners.indices.filter { owners[$0].count > 1 } }

    /// Whether a running aggregator fuses `device` now: one owns the shard it belongs to.
    public func isCovered(_ device: DeviceID) -> Bool {
        let layout = ShardLayout(count: count) ?? .single
        return !owners[layout.shard(of: device)].isEmpty
    }
}

/// An aggregator's retained status as its readers take it: `ServiceStatus`'s JSON (state, version,
/// t, shards, shard_count) or the bare words `online` / `offline`. Lenient where the fields are
/// optional, strict where a wrong value would misplace ownership: shards must be a list of
/// non-negative whole numbers, and a status of another service is not an aggregator's.
public struct AggregatorStatusMessage: Sendable, Equatable {
    /// `online` or `offline`.
    public var state: String
    public var version: String?
    public var t: Double?
    public var shards: [Int]?
    public var shardCount: Int?

    public var isOnline: Bool { state == "online" }

    public init(state: String, version: String? = nil, t: Double? = nil, shards: [Int]? = nil, shardCount: Int? = nil) {
        self.state = state
        self.version = version
        self.t = t
        self.shards = shards
        self.shardCount = shardCount
    }

    /// The status in `payload`, or nil when it is not an aggregator's status.
    public static func parse(_ payload: [UInt8]) -> AggregatorStatusMessage? {
        let text = String(decoding: payload, as: UTF8.self)
        if text == "offline" || text == "online" { return AggregatorStatusMessage(state: text) }
        return payload.withUnsafeBufferPointer { bytes -> AggregatorStatusMessage? in
            guard let index = try? JSONObjectIndex(bytes), let state = index.string("state"),
                  state == "online" || state == "offline" else { return nil }
            if let service = index.string("service"), service != "waymark-aggregator" { return nil }
            var shards: [Int]?
            if let raw = index.raw("shards"), !raw.elementsEqual("null".utf8) {
                guard let list = integers(in: raw) else { return nil }
                shards = list
            }
            var count: Int?
            if let n = index.number("shard_count") {
                guard n >= 1, n <= Double(ShardLayout.maxCount), n == n.rounded() else { return nil }
                count = Int(n)
            }
            return AggregatorStatusMessage(state: state, version: index.string("version"), t: index.number("t"),
                                           shards: shards, shardCount: count)
        }
    }

    /// A JSON array of non-negative whole numbers below a million; nil for anything else.
    static func integers(in array: UnsafeBufferPointer<UInt8>) -> [Int]? {
        var reader = JSONReader(array)
        var out: [Int] = []
        do {
            var list = try reader.openArray()
            while try reader.next(in: &list) {
                let x = try reader.readNumber()
                guard x >= 0, x < 1_000_000, x == x.rounded() else { return nil }
                out.append(Int(x))
            }
        } catch {
            return nil
        }
        return out
    }
}
